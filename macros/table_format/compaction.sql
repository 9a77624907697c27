{#-
    Keeping the lookup tables compact. Every merge-on-read merge adds a data
    file and delete files (to each partition it touches, when the tables are
    partitioned), and a run of thousands of cookies touches every partition:
    without compaction each run reads more small files than the last
    (docs/benchmarks.md, "What each change bought"). A post-hook of each lookup model calls
    visitor_lookup_compact_when_fragmented(this) after its merge.
-#}

{% macro visitor_lookup_compact_when_fragmented(relation) %}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set limit = visitor_lookup_var_whole_number('visitor_lookup__compact_at_files_per_partition', 0) -%}
    {%- if limit == 0 or action_merge_has_nothing_to_merge() -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(adapter.dispatch('compact_when_fragmented', 'visitor_lookup')(relation, limit)) }}
{% endmacro %}


{% macro default__compact_when_fragmented(relation, limit) %}
    {#-
        Iceberg: count the table's live files (data and delete files) from
        its metadata, and above `limit` per partition rewrite the table from
        itself in one INSERT OVERWRITE: no delete files, as few data files
        as Spark's write produces (one per partition when partitioned; 1 to 3
        for an unpartitioned table of 10 M events), one atomic commit (a
        failure leaves the table as it was). Measured faster here than Iceberg's rewrite_data_files
        procedure, which runs one Spark job per partition and leaves dangling
        delete files behind. Delta: not done by the project; its own
        maintenance (OPTIMIZE, auto compaction) applies, see docs/design.md.
    -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return('') }}
    {%- endif -%}
    {#- An unpartitioned table is one partition: its .partitions metadata table has one row. -#}
    {%- set layout = run_query(
        "select (select count(*) from " ~ relation ~ ".files) as files, "
        ~ "(select count(*) from " ~ relation ~ ".partitions) as partitions"
    ).rows[0] -%}
    {%- if layout['files'] <= limit * layout['partitions'] -%}
        {{ return('') }}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {%- do run_query("insert overwrite table " ~ relation ~ " select * from " ~ relation) -%}
    {%- set after = run_query("select count(*) as files from " ~ relation ~ ".files").rows[0] -%}
    {%- do log(
        "Visitor lookup: compacted " ~ relation ~ ": " ~ layout['files'] ~ " files in " ~ layout['partitions']
        ~ " partitions (more than " ~ limit ~ " per partition) rewritten as " ~ after['files'] ~ " in "
        ~ ((modules.datetime.datetime.now() - started).total_seconds() | round(1)) ~ " s",
        info=True,
    ) -%}
    {{ return('') }}
{% endmacro %}
