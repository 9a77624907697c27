{#-
    What differs between the table formats the models are written in, and
    where the models go: each model's config() calls visitor_lookup_schema
    (and the per-run tables' visitor_lookup_scratch_file_format); the kept
    tables take their format when a run creates them
    (visitor_lookup_table_format, read from the session).
-#}

{% macro visitor_lookup_table_format() %}
    {#-
        iceberg or delta: the var visitor_lookup__file_format, or when it is
        empty Delta on Databricks, and on Spark the format whose catalog the
        session has as its spark_catalog (Iceberg's SparkSessionCatalog or
        Delta's DeltaCatalog), read when the run starts: never a target's
        name. None while dbt parses, when nothing needs it.
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
    {%- if chosen -%}
        {{ return(chosen) }}
    {%- elif target.type == 'databricks' -%}
        {{ return('delta') }}
    {%- elif not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set catalog = visitor_lookup_start_facts()['session_catalog'] -%}
    {%- for format in ['iceberg', 'delta'] if format in catalog | lower -%}
        {{ return(format) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Visitor lookup: the session catalog (spark.sql.catalog.spark_catalog = '" ~ catalog ~ "') is "
        ~ "neither Iceberg's SparkSessionCatalog nor Delta's DeltaCatalog, so the table format is unknown. "
        ~ "Set it in the profile's server_side_parameters (or the Thrift Server's configuration), or set "
        ~ "var visitor_lookup__file_format to 'iceberg' or 'delta'."
    ) }}
{% endmacro %}


{% macro visitor_lookup_schema() %}
    {#- The models' custom schema: visitor_lookup__schema, or none (the target's schema) when it is empty. -#}
    {{ return(visitor_lookup_var_schema_name('visitor_lookup__schema')) }}
{% endmacro %}


{% macro visitor_lookup_is_delta_target() %}
    {{ return(visitor_lookup_table_format() == 'delta') }}
{% endmacro %}


{% macro visitor_lookup_storage(write_mode) %}
    {#- How the project writes its tables on this adapter: data, one mapping per adapter (storage). -#}
    {{ return(adapter.dispatch('storage', 'visitor_lookup')(write_mode)) }}
{% endmacro %}


{% macro default__storage(write_mode) %}
    {#-
        scratch: the tables rebuilt by every run and read only within it (the
        run's limits, events and cookie changes), whatever the format of the
        permanent tables. Plain Parquet: no snapshot, manifest or log to
        write for a table the next run drops; Spark's session catalog keeps
        Parquet tables beside Iceberg's and Delta's. Written without
        Parquet's dictionaries: their event ids are unique and cookies
        nearly so, and the writer fills a dictionary per column and row
        group before it gives up on it (docs/performance.md). Dropped
        with PURGE: through Iceberg's session catalog a plain DROP TABLE of a
        Parquet table leaves its files, and the next CREATE fails on the
        leftover folder; Delta's catalog takes PURGE as well.

        kept: every table the project keeps, per format. Iceberg: every
        commit writes a metadata file listing every snapshot kept, and
        Iceberg keeps the last 100 of them; ten are enough to look back at.
        Parquet's dictionary per column and row group capped at 64 KB
        instead of 2 MB, as event and cookie ids are nearly all distinct
        (docs/performance.md); columns of few values keep theirs. Row groups
        of 8 MB instead of 128 MB: a file of a first build holds a stretch of
        processed events by landed, and a run reads from it only the row
        groups since the earliest instant it recomputes (their statistics
        skip the others), and the few files that hold its events' stored
        copies in several tasks instead of one each. Delta trims its own log.

        lookup: added for the lookup tables, which take small merges spread
        over the whole table. A copy-on-write merge rewrites every data file
        it touches; merge-on-read marks the changed rows deleted instead
        (Iceberg's delete files, Delta's deletion vectors), and compaction
        folds them in later (visitor_lookup__lookup_write_mode).
    -#}
    {{ return({
        'scratch': {
            'file_format': 'parquet',
            'options': {'parquet.enable.dictionary': 'false'},
            'drop_clause': 'purge',
        },
        'iceberg': {
            'kept': {
                'write.metadata.delete-after-commit.enabled': 'true',
                'write.metadata.previous-versions-max': '10',
                'write.parquet.dict-size-bytes': '65536',
                'write.parquet.row-group-size-bytes': '8388608',
            },
            'lookup': {
                'format-version': '2',
                'write.delete.mode': write_mode,
                'write.update.mode': write_mode,
                'write.merge.mode': write_mode,
            },
        },
        'delta': {
            'kept': {},
            'lookup': {'delta.enableDeletionVectors': 'true' if write_mode == 'merge-on-read' else 'false'},
        },
    }) }}
{% endmacro %}


{% macro databricks__storage(write_mode) %}
    {#-
        Databricks' catalogs manage Delta tables and remove a dropped
        table's files (its DROP TABLE has no PURGE clause); dbt-databricks
        has no options config. The kept and lookup tables are as on Spark.
    -#}
    {%- set storage = default__storage(write_mode) -%}
    {%- do storage.update({'scratch': {'file_format': 'delta', 'options': {}, 'drop_clause': ''}}) -%}
    {{ return(storage) }}
{% endmacro %}


{% macro visitor_lookup_scratch_file_format() %}
    {{ return(visitor_lookup_storage(none)['scratch']['file_format']) }}
{% endmacro %}


{% macro visitor_lookup_drop_purge() %}
    {#- The clause that makes DROP TABLE of a per-run table remove its files too. -#}
    {{ return(visitor_lookup_storage(none)['scratch']['drop_clause']) }}
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


{% macro visitor_lookup_table_properties(kind='kept', configured=none) %}
    {#-
        Table properties set when a table is created, from the storage
        mapping for the models' table format: those of every table the
        project keeps, and for kind 'lookup' those of the lookup tables
        added (with visitor_lookup__lookup_write_mode); then a model's
        tblproperties config (`configured`, a host's dbt_project.yml or the
        model's config) over them. The lookup tables' write mode is the
        var's alone, and the project's own `visitor_lookup.` properties are
        its machinery's: a config that sets either otherwise stops the run.
        None when there are none.
    -#}
    {%- set write_mode = visitor_lookup_lookup_write_mode() if kind == 'lookup' else none -%}
    {%- set properties = visitor_lookup_storage(write_mode)[visitor_lookup_table_format()] -%}
    {%- set chosen = {} -%}
    {%- do chosen.update(properties['kept']) -%}
    {%- if kind == 'lookup' -%}
        {%- do chosen.update(properties['lookup']) -%}
    {%- endif -%}
    {%- for name, value in visitor_lookup_configured_properties(configured).items() -%}
        {%- if kind == 'lookup' and name in properties['lookup'] and value != chosen[name] -%}
            {%- do exceptions.raise_compiler_error(
                "Visitor lookup: the tblproperties config of " ~ model.name ~ " sets '" ~ name ~ "' = '"
                ~ value ~ "', but the lookup tables' write mode gives '" ~ chosen[name] ~ "': choose it "
                ~ "with var visitor_lookup__lookup_write_mode (merge-on-read or copy-on-write) and leave "
                ~ "'" ~ name ~ "' out of tblproperties."
            ) -%}
        {%- endif -%}
        {%- do chosen.update({name: value}) -%}
    {%- endfor -%}
    {{ return(chosen or none) }}
{% endmacro %}


{% macro visitor_lookup_configured_properties(configured) %}
    {#-
        A model's tblproperties config as table properties, for the kept and
        the per-run tables alike: names and values as text (YAML's true and
        false lower case, as Spark's booleans). A property named
        visitor_lookup.* is the project's machinery's and stops the run.
    -#}
    {%- set properties = {} -%}
    {%- for name, value in (configured or {}).items() -%}
        {%- if (name | string | lower).startswith('visitor_lookup.') -%}
            {%- do exceptions.raise_compiler_error(
                "Visitor lookup: the tblproperties config of " ~ model.name ~ " sets '" ~ name ~ "'; "
                ~ "properties named visitor_lookup.* are the project's own: leave them out of tblproperties."
            ) -%}
        {%- endif -%}
        {%- do properties.update({name | string: (value | string | lower) if value is boolean else value | string}) -%}
    {%- endfor -%}
    {{ return(properties) }}
{% endmacro %}
