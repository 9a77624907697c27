{#-
    What differs between the table formats the models are written in, and
    where the models go: each model's config() calls visitor_lookup_schema
    and visitor_lookup_table_format (or visitor_lookup_scratch_file_format).
-#}

{% macro visitor_lookup_table_format() %}
    {#-
        iceberg or delta: the var visitor_lookup__file_format, or when it is
        empty Delta on Databricks and on a target whose name contains "delta".
    -#}
    {%- set chosen = var('visitor_lookup__file_format') -%}
    {%- if chosen and chosen not in ['iceberg', 'delta'] -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__file_format must be 'iceberg', 'delta' or empty "
            ~ "(chosen by the target), got '" ~ chosen ~ "'."
        ) }}
    {%- endif -%}
    {%- if chosen == 'iceberg' and target.type == 'databricks' -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__file_format is 'iceberg', but on Databricks the models "
            ~ "are Delta tables (dbt-databricks refuses file_format iceberg): set it to 'delta' or leave it empty."
        ) }}
    {%- endif -%}
    {{ return(chosen or ('delta' if 'delta' in target.name or target.type == 'databricks' else 'iceberg')) }}
{% endmacro %}


{% macro visitor_lookup_schema() %}
    {#- The models' custom schema: visitor_lookup__schema, or none (the target's schema) when it is empty. -#}
    {%- set chosen = var('visitor_lookup__schema') | string | trim -%}
    {%- set foreign = chosen | lower | list | reject('in', 'abcdefghijklmnopqrstuvwxyz0123456789_') | list -%}
    {%- if foreign -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__schema must be empty or a name of letters, digits and "
            ~ "underscores, got '" ~ chosen ~ "'."
        ) }}
    {%- endif -%}
    {{ return(chosen or none) }}
{% endmacro %}


{% macro visitor_lookup_is_delta_target() %}
    {{ return(visitor_lookup_table_format() == 'delta') }}
{% endmacro %}


{% macro visitor_lookup_scratch_file_format() %}
    {{ return(adapter.dispatch('scratch_file_format', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__scratch_file_format() %}
    {#-
        File format of the tables rebuilt by every run and read only within
        it (the run's limits, events and cookie changes), whatever the format
        of the permanent tables: plain Parquet, with no snapshot, manifest or
        log to write for a table the next run drops. Spark's session catalog
        keeps Parquet tables beside Iceberg's and Delta's.
    -#}
    {{ return('parquet') }}
{% endmacro %}


{% macro databricks__scratch_file_format() %}
    {#- Databricks' catalogs manage Delta tables. -#}
    {{ return('delta') }}
{% endmacro %}


{% macro visitor_lookup_scratch_write_config() %}
    {#-
        Config arguments of base_events_this_run, the per-run table that
        holds every event of the window, for its write; dispatched on the
        adapter. The model passes them on as config(**...), so an adapter
        that has no such config key never sees it.
    -#}
    {{ return(adapter.dispatch('scratch_write_config', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__scratch_write_config() %}
    {#-
        Parquet's dictionaries off (dbt-spark's options config). Event ids
        are unique and cookies nearly so; the writer fills a dictionary per
        column and row group before it gives up on it, work that only slows
        a full build's write of millions of events (docs/performance.md).
    -#}
    {{ return({'options': {'parquet.enable.dictionary': 'false'}}) }}
{% endmacro %}


{% macro databricks__scratch_write_config() %}
    {#- Nothing: the per-run tables are Delta there, and dbt-databricks has no options config. -#}
    {{ return({}) }}
{% endmacro %}


{% macro visitor_lookup_drop_purge() %}
    {#- The clause that makes DROP TABLE of a per-run table remove its files too. -#}
    {{ return(adapter.dispatch('drop_purge', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__drop_purge() %}
    {#-
        Through Iceberg's session catalog, a plain DROP TABLE of a Parquet
        table removes its metastore entry and leaves its files, and the next
        CREATE of the table fails on the leftover folder; Delta's catalog takes
        PURGE as well.
    -#}
    {{ return('purge') }}
{% endmacro %}


{% macro databricks__drop_purge() %}
    {#- Databricks' DROP TABLE has no PURGE clause; its catalog removes a managed table's files. -#}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_lookup_partition_by() %}
    {#-
        The lookup tables' partitioning, set when they are created. A run
        touches cookies spread over every prefix, so partitions never spare a
        merge any reading; they only multiply the files each merge writes
        (256 prefixes: a data and a delete file in each, per table and run).
        Unpartitioned by default; partitioning by vcid_first_two pays once a
        table is many hundreds of MB (var visitor_lookup__partition_lookup_tables).
    -#}
    {%- if visitor_lookup_var_boolean('visitor_lookup__partition_lookup_tables') -%}
        {{ return(['vcid_first_two']) }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}


{% macro visitor_lookup_table_properties() %}
    {#-
        Table properties of every table the project keeps (the lookup tables
        add theirs), set when a table is created; none when there are none.
        Dispatched per table format (`<adapter>__table_properties_<format>`).
    -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return(adapter.dispatch('table_properties_delta', 'visitor_lookup')()) }}
    {%- endif -%}
    {{ return(adapter.dispatch('table_properties_iceberg', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__table_properties_iceberg() %}
    {#-
        Every Iceberg commit writes a new metadata file that lists every
        snapshot kept (a week of runs: thousands), and Iceberg keeps the last
        100 of them until orphan removal deletes older ones. Ten are enough
        to look back at; older ones are deleted at each commit.
        Parquet's dictionary per column and row group is capped at 64 KB
        instead of 2 MB: event ids and cookie ids are nearly all distinct,
        and the writer filled 2 MB of dictionary per column before giving
        up on it (files the same size, reads no slower; docs/performance.md). Columns of few
        values, such as vcid_first_two, keep theirs.
    -#}
    {{ return({
        'write.metadata.delete-after-commit.enabled': 'true',
        'write.metadata.previous-versions-max': '10',
        'write.parquet.dict-size-bytes': '65536',
    }) }}
{% endmacro %}


{% macro default__table_properties_delta() %}
    {#- Delta's defaults: its log is checkpointed and trimmed on its own (30 days). -#}
    {{ return(none) }}
{% endmacro %}


{% macro visitor_lookup_lookup_table_properties() %}
    {#-
        The lookup tables take small merges spread over the whole table. A
        copy-on-write merge rewrites every data file it touches (for a run's
        cookies, spread over every prefix: the whole table); merge-on-read
        marks the changed rows deleted instead (Iceberg's delete files,
        Delta's deletion vectors), and compaction folds them in later. The var
        visitor_lookup__lookup_write_mode picks the mode for new tables
        (docs/performance.md compares them). Dispatched per table format
        (and adapter: `<adapter>__lookup_table_properties_<format>` overrides).
    -#}
    {%- set write_mode = visitor_lookup_lookup_write_mode() -%}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return(adapter.dispatch('lookup_table_properties_delta', 'visitor_lookup')(write_mode)) }}
    {%- endif -%}
    {{ return(adapter.dispatch('lookup_table_properties_iceberg', 'visitor_lookup')(write_mode)) }}
{% endmacro %}


{% macro default__lookup_table_properties_iceberg(write_mode) %}
    {%- set properties = {
        'format-version': '2',
        'write.delete.mode': write_mode,
        'write.update.mode': write_mode,
        'write.merge.mode': write_mode,
    } -%}
    {%- do properties.update(visitor_lookup_table_properties()) -%}
    {{ return(properties) }}
{% endmacro %}


{% macro default__lookup_table_properties_delta(write_mode) %}
    {{ return({'delta.enableDeletionVectors': 'true' if write_mode == 'merge-on-read' else 'false'}) }}
{% endmacro %}
