{#-
    Typed, validated access to the project's vars. A bad value fails the run
    with a message that names the var and says what it takes.
-#}

{% macro visitor_lookup_var_whole_number(name, minimum) %}
    {%- set value = var(name) -%}
    {%- set text = value | string | trim -%}
    {%- if value is boolean or not modules.re.fullmatch('[0-9]+', text) or (text | int) < minimum -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a whole number >= " ~ minimum
            ~ ", got '" ~ value ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(text | int) }}
{% endmacro %}


{% macro visitor_lookup_var_boolean(name) %}
    {%- set value = var(name) -%}
    {%- if value is not boolean -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be true or false, got '" ~ value
            ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_var_schema_name(name) %}
    {#- A var that names a schema: its name, or none when it is empty. -#}
    {%- set chosen = var(name) | string | trim -%}
    {%- set foreign = chosen | lower | list | reject('in', 'abcdefghijklmnopqrstuvwxyz0123456789_') | list -%}
    {%- if foreign -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be empty or a name of letters, digits and "
            ~ "underscores, got '" ~ chosen ~ "'."
        ) }}
    {%- endif -%}
    {{ return(chosen or none) }}
{% endmacro %}


{% macro visitor_lookup_var_mapping(name) %}
    {#- A var that maps names to text: a dict of non-empty strings; {} when it is empty. -#}
    {%- set value = var(name) -%}
    {%- if value is none or value == '' -%}
        {{ return({}) }}
    {%- endif -%}
    {%- if value is not mapping or value.values() | reject('string') | list
        or value.values() | map('trim') | reject | list -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a mapping of names to non-empty text, got '"
            ~ value ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_var_timestamp(name) %}
    {#-
        A var that names a UTC instant, 'YYYY-MM-DD' or 'YYYY-MM-DD
        HH:MM:SS[.ffffff]', as timestamp text with microseconds; none when
        it is empty. A date the calendar lacks (2026-02-30) fails too.
    -#}
    {%- set value = var(name) | string | trim -%}
    {%- if not value -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set parts = modules.re.fullmatch(
        '([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.]([0-9]{1,6}))?)?', value) -%}
    {%- set numbers = (parts.groups()[:6] | map('default', '0', true) | map('int') | list) if parts else [] -%}
    {%- set valid = parts and 1 <= numbers[0] < 9999 and 1 <= numbers[1] <= 12 and numbers[3] <= 23
        and numbers[4] <= 59 and numbers[5] <= 59 -%}
    {%- if valid -%}
        {%- set month_end = modules.datetime.date(numbers[0] + numbers[1] // 12, numbers[1] % 12 + 1, 1)
            - modules.datetime.timedelta(days=1) -%}
        {%- set valid = 1 <= numbers[2] <= month_end.day -%}
    {%- endif -%}
    {%- if not valid -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a date 'YYYY-MM-DD' or a timestamp "
            ~ "'YYYY-MM-DD HH:MM:SS' (UTC) that exists, got '" ~ value ~ "'."
        ) }}
    {%- endif -%}
    {%- set micros = ((parts.group(7) or '') ~ '000000')[:6] | int -%}
    {%- set instant = modules.datetime.datetime(
        numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], micros) -%}
    {{ return(visitor_lookup_format_timestamp(instant)) }}
{% endmacro %}


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
    {%- if var('visitor_lookup__lock_expiry_minutes', none) is not none -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__lock_expiry_minutes is gone: the run lock is a lease now, "
            ~ "renewed as the run goes. Set visitor_lookup__lock_lease_minutes instead (longer than the "
            ~ "longest single model; default 15)."
        ) }}
    {%- endif -%}
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
        follow the var; one row of first_dates tells (all were keyed alike),
        read with the run's other start facts.
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
