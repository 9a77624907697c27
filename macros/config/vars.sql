{#-
    The project's vars that every run reads, each through its typed reader
    (var_types.sql): a bad value fails the run with a message that names the
    var and says what it takes.
-#}

{% macro visitor_lookup_start_date() %}
    {#- visitor_lookup__start_date as timestamp text (UTC); it may not be empty. -#}
    {%- set value = visitor_lookup_var_timestamp('visitor_lookup__start_date') -%}
    {%- if value is none -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__start_date must be a date 'YYYY-MM-DD' or a timestamp "
            ~ "'YYYY-MM-DD HH:MM:SS' (UTC), got ''."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_read_again_from() %}
    {#-
        visitor_lookup__read_again_from as timestamp text, or none when it is
        empty: a run in state 3 or 4 reads every event loaded from it on
        again. Before the start date it would read what a rebuild does not.
    -#}
    {%- set value = visitor_lookup_var_timestamp('visitor_lookup__read_again_from') -%}
    {%- if value is not none and value < visitor_lookup_start_date() -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__read_again_from (" ~ value ~ ") is before "
            ~ "visitor_lookup__start_date (" ~ visitor_lookup_start_date() ~ "): no run reads what was "
            ~ "loaded before the start date. Move it on, or move the start date with a --full-refresh."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_lookup_write_mode() %}
    {#- The var, or when it is empty the mode measured faster for the table format (docs/performance.md). -#}
    {%- set value = var('visitor_lookup__lookup_write_mode') -%}
    {%- if value not in ['merge-on-read', 'copy-on-write', ''] -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__lookup_write_mode must be 'merge-on-read', "
            ~ "'copy-on-write' or empty (chosen by the table format), got '" ~ value ~ "'."
        ) }}
    {%- endif -%}
    {{ return(value or ('copy-on-write' if visitor_lookup_is_delta_target() else 'merge-on-read')) }}
{% endmacro %}


{% macro visitor_lookup_test_scope() %}
    {%- set value = var('visitor_lookup__test_scope') -%}
    {%- if value not in ['changed', 'all'] -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__test_scope must be 'changed' (test what the latest run "
            ~ "changed) or 'all' (test every row), got '" ~ value ~ "'."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}
