{#-
    Every var checked at the start of a run, before any model, so that a bad
    value stops it with one line naming the var.
-#}

{% macro visitor_lookup_validate_vars() %}
    {#- Called from on-run-start: every var is checked before any model runs. -#}
    {%- do visitor_lookup_start_date() -%}
    {%- do visitor_lookup_read_again_from() -%}
    {#-
        What only Spark can tell (the session's table format, the stored
        keys' prefix length) matters to what builds tables; dbt test reads
        what is built, and sends no statement for it.
    -#}
    {%- set ask_spark = execute and flags.WHICH != 'test' -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__backfill_limit_days', 1) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__lookback_window_hours', 0) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__max_clock_skew_minutes', 0) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__partition_prefix_length', 1) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__compact_at_files_per_partition', 0) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__lock_lease_minutes', 1) -%}
    {%- do visitor_lookup_var_whole_number('visitor_lookup__lock_wait_seconds', 0) -%}
    {%- do visitor_lookup_snapshot_retention_days() -%}
    {%- do visitor_lookup_test_scope() -%}
    {%- do visitor_lookup_var_boolean('visitor_lookup__partition_lookup_tables') -%}
    {%- do visitor_lookup_var_boolean('visitor_lookup__allow_refresh') -%}
    {%- do visitor_lookup_var_boolean('visitor_lookup__unit_tests') -%}
    {%- do visitor_lookup_schema() -%}
    {%- do visitor_lookup_var_schema_name('visitor_lookup__erasure_requests_schema') -%}
    {#- Set, these two are checked without Spark; empty, they ask it for the session's format. -#}
    {%- if ask_spark or var('visitor_lookup__file_format') -%}
        {%- do visitor_lookup_table_format() -%}
    {%- endif -%}
    {%- if ask_spark or var('visitor_lookup__lookup_write_mode') -%}
        {%- do visitor_lookup_lookup_write_mode() -%}
    {%- endif -%}
    {%- do visitor_lookup_event_layout() -%}
    {%- if ask_spark -%}
        {%- do visitor_lookup_check_partition_prefix() -%}
        {%- do visitor_lookup_check_event_layout() -%}
    {%- endif -%}
{% endmacro %}


{% macro visitor_lookup_check_partition_prefix() %}
    {#-
        The lookup tables are merged on vcid_first_two: rows keyed with
        another prefix length would never match and be written twice. Unless
        the run rebuilds everything (--full-refresh), the stored keys must
        follow the var, as first_dates' table property (in dbt's listing)
        tells.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set stored_length = visitor_lookup_start_facts()['stored_prefix_length'] -%}
    {%- if stored_length is not none -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__partition_prefix_length is "
            ~ visitor_lookup_var_whole_number('visitor_lookup__partition_prefix_length', 1) ~ ", but the lookup "
            ~ "tables were built with " ~ stored_length ~ ". Set it back, or rebuild them with "
            ~ "the new length: dbt run --full-refresh --vars '{\"visitor_lookup__allow_refresh\": true}'."
        ) }}
    {%- endif -%}
{% endmacro %}
