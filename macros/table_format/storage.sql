{#-
    How the project writes its tables, as data, one mapping per adapter
    (dbt-spark's, dbt-databricks'): the per-run tables' format, options and
    drop clause, and each format's properties for the kept and the lookup
    tables.
-#}

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
        copies in several tasks instead of one each. Delta trims its own log;
        its deletion vectors are off whatever the session's default for new
        tables (Databricks turns them on): a merge that deletes rows rewrites
        the files that held them, so no erased id stays in a live file.

        lookup: added for the lookup tables, which take small merges spread
        over the whole table. A copy-on-write merge rewrites every data file
        it touches; merge-on-read marks the changed rows deleted instead
        (deletion vectors: on Iceberg, format 3's, one per data file, which
        each merge rewrites, where format 2 added a delete file per merge),
        and compaction folds them in later (visitor_lookup__lookup_write_mode).
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
                'format-version': '3',
                'write.delete.mode': write_mode,
                'write.update.mode': write_mode,
                'write.merge.mode': write_mode,
            },
        },
        'delta': {
            'kept': {'delta.enableDeletionVectors': 'false'},
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
