{#-
    A file's path and name as SQL and Jinja take them: one key for the paths
    Spark's listing and its Parquet reader give, the name alone, and a glob
    of names, as Spark's pathGlobFilter takes it (Hadoop's glob syntax), so
    that a view over a folder can take some of its files by name.
-#}

{% macro visitor_lookup_file_key(path_expression) %}
    {#-
        A file's path as the file listing and the Parquet reader both give
        it: the reader's is a URI (percent-encoded, file:///), the
        listing's is not.
    -#}
    regexp_replace(url_decode(replace({{ path_expression }}, '+', '%2B')), '^([a-z0-9]+):/+', '$1:/')
{%- endmacro %}


{% macro visitor_lookup_file_name(path) %}
    {#- A file's name: its path after the last slash. -#}
    {{ return(path.split('/') | last) }}
{% endmacro %}


{% macro visitor_lookup_glob_of_names(names) %}
    {#- A glob that matches exactly these file names (none: no name). -#}
    {%- set escaped = [] -%}
    {%- for name in names | unique | sort -%}
        {%- do escaped.append(visitor_lookup_glob_escape(name)) -%}
    {%- endfor -%}
    {{ return('{' ~ escaped | join(',') ~ '}') }}
{% endmacro %}


{% macro visitor_lookup_glob_escape(text) %}
    {#- Text that a glob matches literally: each character glob syntax uses, escaped (the escape first). -#}
    {{ return(text
        | replace('\\', '\\\\') | replace('{', '\\{') | replace('}', '\\}') | replace('[', '\\[') | replace(']', '\\]')
        | replace('*', '\\*') | replace('?', '\\?') | replace(',', '\\,') | replace('!', '\\!') | replace('^', '\\^')
        | replace('-', '\\-')
    ) }}
{% endmacro %}
