{#-
    A file's path and name as SQL and Jinja take them: one key for the paths
    Spark's listing and its Parquet reader give, the name alone, and globs
    over names, as Spark's pathGlobFilter takes them (Hadoop's glob syntax),
    so that a view over a folder can take some of its files by name and
    leave the others.
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
    {#- A glob that matches exactly these file names. -#}
    {%- set escaped = [] -%}
    {%- for name in names | unique | sort -%}
        {%- do escaped.append(visitor_lookup_glob_escape(name)) -%}
    {%- endfor -%}
    {{ return('{' ~ escaped | join(',') ~ '}') }}
{% endmacro %}


{% macro visitor_lookup_glob_of_other_names(names) %}
    {#-
        A glob that matches every file name but these. Globs cannot negate a
        name, so it names the ways to leave the set: after each prefix of a
        name, a character no name of the set continues it with; a prefix
        that is not itself a name; a name followed by more.
    -#}
    {%- set names = names | unique | list -%}
    {%- set prefixes = [] -%}
    {%- for name in names -%}
        {%- for end in range(name | length + 1) -%}
            {%- do prefixes.append(name[:end]) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set alternatives = [] -%}
    {%- for prefix in prefixes | unique | sort -%}
        {%- set following = [] -%}
        {%- for name in names if name | length > prefix | length and name.startswith(prefix) -%}
            {%- do following.append(name[prefix | length]) -%}
        {%- endfor -%}
        {%- set head = visitor_lookup_glob_escape(prefix) -%}
        {%- if following -%}
            {%- do alternatives.append(head ~ '[!' ~ visitor_lookup_glob_escape(following | unique | sort | join) ~ ']*') -%}
        {%- else -%}
            {%- do alternatives.append(head ~ '?*') -%}
        {%- endif -%}
        {%- if prefix and prefix not in names -%}
            {%- do alternatives.append(head) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('{' ~ alternatives | join(',') ~ '}') }}
{% endmacro %}


{% macro visitor_lookup_glob_escape(text) %}
    {#- Text that a glob matches literally, in a set of characters too: each character glob syntax uses, escaped. -#}
    {%- set escaped = [] -%}
    {%- for character in text -%}
        {%- do escaped.append('\\' ~ character if character in '\\{}[]*?,!^-' else character) -%}
    {%- endfor -%}
    {{ return(escaped | join) }}
{% endmacro %}
