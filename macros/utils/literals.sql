{#- Spark SQL literals and renderings shared by the macros and models. -#}

{% macro visitor_lookup_string_array(values) %}
    {#- A Spark array<string> literal from a list of plain names. -#}
    {{ return("cast(array(" ~ ("'" ~ values | join("', '") ~ "'" if values else "") ~ ") as array<string>)") }}
{% endmacro %}


{% macro visitor_lookup_partition_key(cookie_column) %}
    {#- vcid_first_two: the first visitor_lookup__partition_prefix_length characters of the cookie. -#}
    {%- set length = visitor_lookup_var_whole_number('visitor_lookup__partition_prefix_length', 1) -%}
    {{ return("substring(" ~ cookie_column ~ ", 1, " ~ length ~ ")") }}
{% endmacro %}


{% macro visitor_lookup_string_literal(value) %}
    {#- A Spark string literal of any text (quotes and backslashes escaped), or a typed NULL. -#}
    {%- if value is none -%}
        {{ return('cast(null as string)') }}
    {%- endif -%}
    {{ return("'" ~ (value | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}
