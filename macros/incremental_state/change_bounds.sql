{% macro visitor_lookup_earliest_change(changes_relation, column) %}
    {#-
        The smallest value of a timestamp column of this run's cookie changes,
        as a Spark literal, so scans of stored events prune by it; NULL when
        the run changes nothing there (and the scan then reads nothing).
    -#}
    {%- if not execute -%}
        {{ return(visitor_lookup_timestamp_literal('1970-01-01 00:00:00')) }}
    {%- endif -%}
    {%- if visitor_lookup_existing(changes_relation) is none -%}
        {#- Compiling before the first run: no change yet. -#}
        {{ return(visitor_lookup_timestamp_literal(none)) }}
    {%- endif -%}
    {%- set query -%}
        select {{ visitor_lookup_timestamp_text('min(' ~ column ~ ')') }} as earliest from {{ changes_relation }}
    {%- endset -%}
    {{ return(visitor_lookup_timestamp_literal(run_query(query).rows[0]['earliest'])) }}
{% endmacro %}
