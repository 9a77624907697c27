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
    {#-
        File format of the tables rebuilt by every run and read only within
        it (the run's limits, events and cookie changes). Next to Iceberg,
        plain Parquet: no snapshot, manifest or metadata file to write for a
        table dropped at the next run. On Delta targets (and Databricks, whose
        catalog manages Delta tables), Delta.
    -#}
    {{ return('delta' if visitor_lookup_is_delta_target() else 'parquet') }}
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


{% macro visitor_lookup_lookup_table_properties() %}
    {{ return(adapter.dispatch('lookup_table_properties', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__lookup_table_properties() %}
    {#-
        The lookup tables take small merges spread over every partition.
        Iceberg's default copy-on-write rewrites each data file a merge
        touches (for a merge over all prefixes: the whole table); merge-on-read
        writes delete files instead, which compaction folds in later.
        Delta tables keep their defaults (deletion vectors where enabled).
        The var visitor_lookup__lookup_write_mode switches Iceberg's mode for
        new tables (docs/benchmarks.md compares the two).
    -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set mode = visitor_lookup_lookup_write_mode() -%}
    {{ return({
        'format-version': '2',
        'write.delete.mode': mode,
        'write.update.mode': mode,
        'write.merge.mode': mode,
    }) }}
{% endmacro %}
