{% macro visitor_lookup_file_key(path_expression) %}
    {#-
        A file's path as the file listing and the Parquet reader both give
        it: the reader's is a URI (percent-encoded, file:///), the
        listing's is not.
    -#}
    regexp_replace(url_decode(replace({{ path_expression }}, '+', '%2B')), '^([a-z0-9]+):/+', '$1:/')
{%- endmacro %}
