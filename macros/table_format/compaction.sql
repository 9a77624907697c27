{#-
    Keeping the lookup tables compact. Every merge-on-read merge adds a data
    file and delete files or deletion vectors (to each partition it touches,
    when the tables are partitioned), and a run of thousands of cookies touches every partition:
    without compaction each run reads more small files than the last
    (docs/performance.md). action_merge calls
    visitor_lookup_compact_when_fragmented after the merge of each model
    with the lookup table properties (meta visitor_lookup_table_properties).
-#}

{% macro visitor_lookup_compact_when_fragmented(relation) %}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set limit = visitor_lookup_var_whole_number('visitor_lookup__compact_at_files_per_partition', 0) -%}
    {%- if action_merge_has_nothing_to_merge() -%}
        {{ return('') }}
    {%- endif -%}
    {#-
        A run that erased events compacts whatever the limit: merge-on-read
        only marks the erased rows deleted, and the data files that still
        hold them stay current until rewritten (spec §7).
    -#}
    {%- if limit == 0 and not visitor_lookup_erasing() -%}
        {{ return('') }}
    {%- endif -%}
    {#- Dispatched per table format (and adapter: `<adapter>__compact_when_fragmented_<format>`). -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return(adapter.dispatch('compact_when_fragmented_delta', 'visitor_lookup')(relation, limit)) }}
    {%- endif -%}
    {{ return(adapter.dispatch('compact_when_fragmented_iceberg', 'visitor_lookup')(relation, limit)) }}
{% endmacro %}


{% macro visitor_lookup_erasing() %}
    {#- True when this run's cookie changes include cookies an erasure took events from. -#}
    {{ return(visitor_lookup_change_bounds(visitor_lookup_model_relation('base_cookie_changes_this_run')).erasing) }}
{% endmacro %}


{% macro default__compact_when_fragmented_iceberg(relation, limit) %}
    {#-
        Count the table's live files (data and delete files), from dbt's
        listing where it tells them, otherwise from the table's metadata,
        and above `limit` per partition rewrite what is small or full of
        deletes, in one commit: the files the merges added, and a large file
        once a third of its rows (or, in format 2, `limit` delete files) are
        deleted. A large file otherwise stays with its deletion vector, so a
        compaction costs what the runs added, not the history. After an
        erasure every data file with a deleted row is rewritten.
    -#}
    {%- set layout = visitor_lookup_listed_layout(relation) -%}
    {%- if layout is none -%}
        {%- set layout = run_query(
            "select (select count(*) from " ~ relation ~ ".files) as files, "
            ~ "(select count(*) from " ~ relation ~ ".partitions) as partitions"
        ).rows[0] -%}
    {%- endif -%}
    {%- set erasing = visitor_lookup_erasing() -%}
    {%- if layout['files'] <= limit * layout['partitions'] and not erasing -%}
        {{ return('') }}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {%- set rewrite -%}
        call spark_catalog.system.rewrite_data_files(
            table => '{{ relation }}',
            options => map(
                'min-input-files', '2',
                'min-file-size-bytes', '{{ visitor_lookup_compaction_small_file_bytes() }}',
                'delete-file-threshold', '{{ 1 if erasing else limit }}',
                'remove-dangling-deletes', 'true'
            )
        )
    {%- endset -%}
    {%- set rewritten = run_query(rewrite).rows[0] -%}
    {#- Its answer says what it rewrote: no statement counts the files again. -#}
    {%- do visitor_lookup_log_compaction(
        relation, layout['files'], layout['partitions'], visitor_lookup_compaction_reason(erasing, limit),
        rewritten['rewritten_data_files_count'] ~ ' data and ' ~ rewritten['removed_delete_files_count']
        ~ ' delete files rewritten as ' ~ rewritten['added_data_files_count'],
        started
    ) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_compaction_small_file_bytes() %}
    {#-
        A data file under this size is rewritten by a compaction: a merge's
        files of thousands of rows are far smaller, a first build's of
        millions of events far larger. Rewriting a small table whole costs
        little.
    -#}
    {{ return(8 * 1024 * 1024) }}
{% endmacro %}


{% macro visitor_lookup_listed_layout(relation) %}
    {#-
        An Iceberg table's files (data and delete files) and partitions after
        this model's merge, without a statement, where dbt's listing of the
        schema tells them: the table's current snapshot summary as the run
        found it (before its merge), plus the least the merge added (one file
        for its inserts, one for its updates and deletes); an unpartitioned
        table (no default-partition-spec) is one partition. None for a
        partitioned table, or a listing without the summary: then the table's
        metadata is counted.
    -#}
    {%- set listed = load_cached_relation(relation) -%}
    {%- if listed is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set summary = visitor_lookup_listed_property(listed, 'current-snapshot-summary') -%}
    {%- if summary is none or visitor_lookup_listed_property(listed, 'default-partition-spec') is not none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set totals = fromjson(summary) -%}
    {%- set merged = visitor_lookup_carried(model.name, {}) -%}
    {{ return({
        'files': (totals.get('total-data-files', 0) | int) + (totals.get('total-delete-files', 0) | int)
            + (1 if merged.get('inserted', 0) > 0 else 0)
            + (1 if merged.get('updated', 0) + merged.get('deleted', 0) > 0 else 0),
        'partitions': 1,
    }) }}
{% endmacro %}


{% macro default__compact_when_fragmented_delta(relation, limit) %}
    {#-
        Count the table's data files from its Delta log (DESCRIBE DETAIL), and
        above `limit` per partition run OPTIMIZE: Delta's own compaction,
        which bins the small files together (delta_optimize_small_files
        says which are small) and drops the rows its deletion vectors mark,
        in one commit. After an erasure the table is rewritten whole.
    -#}
    {%- set detail = run_query("describe detail " ~ relation).rows[0] -%}
    {#- partitionColumns arrives as the text of a list, such as [] or ["vcid_first_two"]. -#}
    {%- set partition_columns = modules.re.findall('[A-Za-z_][A-Za-z0-9_]*', detail['partitionColumns'] | string) -%}
    {%- set partitions = 1 -%}
    {%- if partition_columns -%}
        {%- set partitions = run_query(
            "select count(*) as partitions from (select distinct " ~ partition_columns | join(', ')
            ~ " from " ~ relation ~ ")"
        ).rows[0]['partitions'] -%}
    {%- endif -%}
    {%- set erasing = visitor_lookup_erasing() -%}
    {%- if detail['numFiles'] <= limit * [partitions, 1] | max and not erasing -%}
        {{ return('') }}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {%- if erasing -%}
        {#-
            Rewritten whole: OPTIMIZE leaves a file alone in its bin as it is,
            with the rows its deletion vector marks, and REORG ... APPLY
            (PURGE), which would not, fails on a cluster's executors in Delta 4.4.
        -#}
        {%- call statement('visitor_lookup_rewrite_whole') -%}
            insert overwrite table {{ relation }} select * from {{ relation }}
        {%- endcall -%}
    {%- else -%}
        {%- do adapter.dispatch('delta_optimize_small_files', 'visitor_lookup')() -%}
        {%- do run_query("optimize " ~ relation) -%}
    {%- endif -%}
    {%- set after = run_query("describe detail " ~ relation).rows[0] -%}
    {%- do visitor_lookup_log_compaction(
        relation, detail['numFiles'], partitions, visitor_lookup_compaction_reason(erasing, limit),
        ('rewritten whole' if erasing else 'OPTIMIZE') ~ ': ' ~ detail['numFiles'] ~ ' files into '
        ~ after['numFiles'],
        started
    ) -%}
    {{ return('') }}
{% endmacro %}


{% macro default__delta_optimize_small_files() %}
    {#-
        OPTIMIZE takes a file under 1 GB as small, so it rewrote a large
        lookup table whole at every compaction. The project's threshold
        instead, as on Iceberg: the files the merges added, and a larger file
        once Delta's share of deleted rows (maxDeletedRowsRatio) is marked.
        It stays set in the run's Spark session, for any later OPTIMIZE too.
    -#}
    {%- do run_query(
        "set spark.databricks.delta.optimize.minFileSize=" ~ visitor_lookup_compaction_small_file_bytes()
    ) -%}
{% endmacro %}


{% macro databricks__delta_optimize_small_files() %}
    {#- Databricks sizes OPTIMIZE's files itself, and its SQL warehouses refuse to set Spark's settings. -#}
{% endmacro %}


{% macro visitor_lookup_compaction_reason(erasing, limit) %}
    {{ return('erased rows' if erasing else 'more than ' ~ limit ~ ' per partition') }}
{% endmacro %}


{% macro visitor_lookup_log_compaction(relation, files, partitions, reason, outcome, started) %}
    {#- Logged, and kept for action_merge_report to add to the model's result. -#}
    {%- do store_raw_result('visitor_lookup_compaction', message='1 compaction (' ~ outcome ~ ')', code='compaction') -%}
    {%- do log(
        "Visitor lookup: compacted " ~ relation ~ ": " ~ files ~ " files in " ~ partitions
        ~ " partitions (" ~ reason ~ "), " ~ outcome ~ ", in "
        ~ ((modules.datetime.datetime.now() - started).total_seconds() | round(1)) ~ " s",
        info=True,
    ) -%}
{% endmacro %}
