{#-
    Materialization `action_merge`: the model's rows are a change set, each
    with a merge_action column saying what to do with its key: 'insert' (the
    table has no row with that key), 'update' or 'delete' (it has one). A
    model emits only rows that differ from the table, so unchanged rows (and,
    with merge-on-read, the files holding them) are left alone. On the first
    build (and --full-refresh) the table is created from the rows that are
    not deletes. The change set's merge is in action_merge_apply.sql, the
    model's result in action_merge_report.sql; models compute their change
    sets with action_merge_changes (action_merge_changes.sql).

    The change set is written once to a per-run table; its updates and
    deletes go in a MERGE keyed by unique_key with only WHEN MATCHED clauses
    (Spark streams the table past the broadcast change set instead of
    shuffling all of it, as any WHEN NOT MATCHED clause makes it do), and its
    inserts are appended with INSERT INTO, without joining the table at all.
    Those are two commits: a failure between them fails the model, and the
    next run, which compares with what is stored, completes it. A model
    whose change set a per-run model of the run computed already (meta
    visitor_lookup_change_set_stored) is merged from its query as it is.

    Why this shape: close, insert and delete in one pass is what SCD2 under
    late data needs, and Spark rejects subqueries in MERGE conditions and
    makes WHEN NOT MATCHED BY SOURCE scan the whole table, so deletions
    travel as explicit source rows.

    Why a materialization of our own rather than a strategy of dbt-spark's
    incremental one: that one admits only its own strategies (two plain
    macros a host project would have to override), and around the merge it
    sends a temporary view of the query and a DESCRIBE of the table, and a
    model with nothing to merge still costs two statements. Here the change
    set is written straight from the model's query, the columns are the
    documented ones (a test holds every built column documented), and a
    model that said it has nothing to merge sends no statement at all.
    Models test visitor_lookup_is_incremental(), as dbt's is_incremental()
    answers only for materialized='incremental'.
-#}

{% materialization action_merge, default %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing = load_cached_relation(this) -%}
    {%- set full_refresh = should_full_refresh() -%}
    {#- 'lookup' for the lookup tables: their write mode, and compaction after each merge. -#}
    {%- set table_properties = config.get('meta', {}).get('visitor_lookup_table_properties', 'kept') -%}
    {{ run_hooks(pre_hooks) }}
    {%- if existing is none or existing.is_view or full_refresh -%}
        {#- Delta replaces a table in place (its history stays); other formats drop it first. -#}
        {%- set replace = existing is not none and existing.is_delta and visitor_lookup_table_format() == 'delta' -%}
        {%- if existing is not none and not replace -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- set partition_by = config.get('partition_by') -%}
        {%- call statement('main') -%}
            create {{- ' or replace' if replace }} table {{ target_relation }}
            {{ visitor_lookup_kept_table_options(table_properties, config.get('tblproperties')) }}
            {{- options_clause() }}
            {%- if partition_by %}
            partitioned by ({{ partition_by | join(', ') }})
            {%- endif %}
            {{- location_clause() }}
            as
            select {{ action_merge_columns() | join(', ') }}
            from (
                {{ compiled_code }}
            ) as changes
            where merge_action != 'delete'
        {%- endcall -%}
    {%- else -%}
        {%- do action_merge_apply(existing, compiled_code, config.require('unique_key'),
            config.get('incremental_predicates')) -%}
        {#- Only a merge fragments a table: a build's files are as large as its write makes them. -#}
        {%- if table_properties == 'lookup' -%}
            {%- do visitor_lookup_compact_when_fragmented(target_relation) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do apply_grants(target_relation, config.get('grants'), should_revoke(existing, full_refresh)) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks) }}
    {%- do action_merge_report(target_relation) -%}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro visitor_lookup_is_incremental(model_name=none) %}
    {#-
        dbt's is_incremental() for models materialized as action_merge: true
        when the model's table (or model_name's, for a per-run model that
        prepares its merge) exists and this is no --full-refresh.
    -#}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set model_table = visitor_lookup_model_relation(model_name) if model_name else this -%}
    {%- set relation = adapter.get_relation(model_table.database, model_table.schema, model_table.identifier) -%}
    {{ return(relation is not none and relation.type == 'table' and not should_full_refresh()) }}
{% endmacro %}


{% macro action_merge_nothing_to_merge(nothing) %}
    {#-
        For a model to call in its SQL with what it knows before its query
        runs: when `nothing` is true (the manifest on an incremental run, a
        lookup model when the run touched no cookie), the materialization
        sends no statement and the compaction check none
        (action_merge_has_nothing_to_merge). Renders nothing.
    -#}
    {%- if execute -%}
        {%- do visitor_lookup_carry('nothing to merge ' ~ model.unique_id, nothing) -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro action_merge_has_nothing_to_merge() %}
    {#- True in the materialization of a model whose SQL said, through action_merge_nothing_to_merge, it has nothing to merge. -#}
    {{ return(visitor_lookup_carried('nothing to merge ' ~ model.unique_id, false)) }}
{% endmacro %}


{% macro action_merge_columns() %}
    {#- The table's columns: the model's documented ones, in their order (a test holds every built column documented). -#}
    {{ return(model.columns.keys() | map('lower') | reject('equalto', 'merge_action') | list) }}
{% endmacro %}
