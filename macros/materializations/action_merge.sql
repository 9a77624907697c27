{#-
    Materialization `action_merge`: the model's rows are a change set, each
    with a merge_action column saying what to do with its key: 'insert' (the
    table has no row with that key), 'update' or 'delete' (it has one). A
    model emits only rows that differ from the table, so unchanged rows (and,
    with merge-on-read, the files holding them) are left alone. On the first
    build (and --full-refresh) the model emits its rows without merge_action
    and the table is created from them.

    The change set is written once to a per-run table; its updates and
    deletes go in a MERGE keyed by unique_key with only WHEN MATCHED clauses
    (Spark streams the table past the broadcast change set instead of
    shuffling all of it, as any WHEN NOT MATCHED clause makes it do), and its
    inserts are appended with INSERT INTO, without joining the table at all.
    Those are two commits: a failure between them fails the model, and the
    next run, which compares with what is stored, completes it.

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
    {%- endif -%}
    {%- if table_properties == 'lookup' -%}
        {%- do visitor_lookup_compact_when_fragmented(target_relation) -%}
    {%- endif -%}
    {%- do apply_grants(target_relation, config.get('grants'), should_revoke(existing, full_refresh)) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks) }}
    {%- do action_merge_report(target_relation) -%}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro visitor_lookup_is_incremental() %}
    {#-
        dbt's is_incremental() for models materialized as action_merge: true
        when the model's table exists and this is no --full-refresh.
    -#}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set relation = adapter.get_relation(this.database, this.schema, this.identifier) -%}
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


{% macro action_merge_apply(target, query, unique_key, incremental_predicates) %}
    {#- Applies the change set the model's query gives to its table (see the materialization). -#}
    {%- if action_merge_has_nothing_to_merge() -%}
        {%- do log("Visitor lookup: " ~ target ~ ": nothing to merge", info=True) -%}
        {%- do action_merge_store_changes(0, 0, 0) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set columns = action_merge_columns() -%}
    {%- set predicates = [] + (incremental_predicates or []) -%}
    {%- for key in keys -%}
        {%- do predicates.append('target.' ~ key ~ ' = source.' ~ key) -%}
    {%- endfor -%}
    {%- do action_merge_add_columns(target) -%}
    {#-
        Written, not a cached view: Spark drops the cache of every plan that
        reads the target as soon as the MERGE writes it.
    -#}
    {%- set changes = adapter.dispatch('action_merge_write_changes', 'visitor_lookup')(target, query) -%}
    {%- set counting -%}
        select
            count_if(merge_action = 'insert') as inserted,
            count_if(merge_action = 'update') as updated,
            count_if(merge_action = 'delete') as deleted
        from {{ changes }}
    {%- endset -%}
    {%- set counted = run_query(counting).rows[0] -%}
    {%- do log("Visitor lookup: " ~ target ~ ": " ~ counted['inserted'] ~ " rows to insert, "
        ~ counted['updated'] ~ " to update, " ~ counted['deleted'] ~ " to delete", info=True) -%}
    {%- do action_merge_store_changes(counted['inserted'], counted['updated'], counted['deleted']) -%}
    {%- if counted['updated'] + counted['deleted'] > 0 -%}
        {%- set matched = '(select * from ' ~ changes ~ " where merge_action != 'insert')" -%}
        {%- call statement('action_merge_matched') -%}
            {{ action_merge_statement(target, matched, predicates, keys, columns) }}
        {%- endcall -%}
    {%- endif -%}
    {%- if counted['inserted'] > 0 -%}
        {%- call statement('action_merge_append') -%}
            insert into {{ target }} ({{ columns | join(', ') }})
            select {{ columns | join(', ') }} from {{ changes }} where merge_action = 'insert'
        {%- endcall -%}
    {%- endif -%}
    {%- do adapter.dispatch('action_merge_clear_changes', 'visitor_lookup')(target) -%}
{% endmacro %}


{% macro action_merge_columns() %}
    {#- The table's columns: the model's documented ones, in their order (a test holds every built column documented). -#}
    {{ return(model.columns.keys() | map('lower') | reject('equalto', 'merge_action') | list) }}
{% endmacro %}


{% macro action_merge_add_columns(target) %}
    {#-
        The columns a model's YAML declares as added after tables were built
        (meta visitor_lookup_added_column, with their data_type and fill, an
        expression of the row): a table without one gets it, filled for the
        rows it holds, so a warehouse built by an earlier version keeps going
        without a full refresh. Its model reads a key not filled yet as
        matching anything (visitor_lookup_stored_rows), so a run stopped
        between the two statements costs speed, not rows.
    -#}
    {%- set added = {} -%}
    {%- for name, column in model.columns.items() if column.meta.visitor_lookup_added_column is defined -%}
        {%- do added.update({name | lower: column.meta.visitor_lookup_added_column}) -%}
    {%- endfor -%}
    {%- if not added -%}
        {{ return('') }}
    {%- endif -%}
    {%- set stored = visitor_lookup_stored_columns(target) -%}
    {%- set missing = added.keys() | reject('in', stored) | list -%}
    {%- if not missing -%}
        {{ return('') }}
    {%- endif -%}
    {%- call statement('action_merge_add_columns') -%}
        alter table {{ target }} add columns (
        {%- for name in missing %}
            {{ name }} {{ added[name].data_type }}{{ ',' if not loop.last }}
        {%- endfor %}
        )
    {%- endcall -%}
    {%- call statement('action_merge_fill_columns') -%}
        update {{ target }} set
        {%- for name in missing %}
            {{ name }} = {{ added[name].fill }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endcall -%}
    {%- do log("Visitor lookup: " ~ target ~ ": added and filled column " ~ missing | join(', ')
        ~ " (a table built by an earlier version)", info=True) -%}
{% endmacro %}


{% macro default__action_merge_write_changes(target, query) %}
    {#-
        The change set in a folder, not a table: Spark writes a table's
        files before its metastore entry, so a run killed while it wrote a
        change set as a table left a folder under the table's name that
        Spark then refused to create the table over, on every later run.
        A folder written with INSERT OVERWRITE DIRECTORY has no entry to
        lose. It is the invocation's own, under one folder per model beside
        the model's table (action_merge_changes_folder): a killed run's
        statement that a Thrift Server or a cluster carries on with after
        the run's lease lapsed writes its own folder, never this run's. A
        table an earlier version of the project left under that name goes
        first, with its files.
    -#}
    {%- set table = action_merge_changes_table(target) -%}
    {%- set leftover = adapter.get_relation(table.database, table.schema, table.identifier) -%}
    {%- if leftover is not none -%}
        {%- call statement('action_merge_drop_leftover_changes') -%}
            drop table if exists {{ leftover }} {{ visitor_lookup_drop_purge() }}
        {%- endcall -%}
    {%- endif -%}
    {%- set folder = action_merge_changes_folder(target) ~ '/' ~ invocation_id -%}
    {%- set file_format = visitor_lookup_scratch_file_format() -%}
    {%- call statement('action_merge_write_changes') -%}
        insert overwrite directory {{ visitor_lookup_string_literal(folder) }}
        using {{ file_format }}
        {{ query }}
    {%- endcall -%}
    {{ return(file_format ~ '.`' ~ folder ~ '`') }}
{% endmacro %}


{% macro default__action_merge_clear_changes(target) %}
    {#-
        The model's folder of change sets overwritten with no rows once the
        merge is applied: its files go, this run's and any a killed run
        left, as their deleted rows may hold erased events.
    -#}
    {%- call statement('action_merge_clear_changes') -%}
        insert overwrite directory {{ visitor_lookup_string_literal(action_merge_changes_folder(target)) }}
        using {{ visitor_lookup_scratch_file_format() }}
        select cast(null as string) as merge_action where false
    {%- endcall -%}
{% endmacro %}


{% macro action_merge_changes_folder(target) %}
    {#-
        The folder of a model's change sets: the table's own folder, as
        dbt's listing of the schema gives it, with __dbt_changes added.
    -#}
    {%- set location = visitor_lookup_listed_location(target) -%}
    {%- if location is none -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: dbt's listing of schema " ~ target.schema ~ " gives no location for " ~ target
            ~ ", where the change set of its merge is written beside it. Nothing was changed; "
            ~ "run again, and if this repeats, the catalog is one the project does not support yet."
        ) }}
    {%- endif -%}
    {{ return(location ~ '__dbt_changes') }}
{% endmacro %}


{% macro action_merge_changes_table(target) %}
    {#- The table a model's change set was written to by earlier versions, and on Databricks still is. -#}
    {{ return(target.incorporate(path={'identifier': target.identifier ~ '__dbt_changes'})) }}
{% endmacro %}


{% macro databricks__action_merge_write_changes(target, query) %}
    {#- Unity Catalog places each managed table in a folder of its own: nothing is left in the way of a table. -#}
    {%- set changes = action_merge_changes_table(target) -%}
    {%- call statement('action_merge_write_changes') -%}
        create or replace table {{ changes }}
        as {{ query }}
    {%- endcall -%}
    {{ return(changes) }}
{% endmacro %}


{% macro databricks__action_merge_clear_changes(target) %}
    {%- call statement('action_merge_clear_changes') -%}
        drop table if exists {{ action_merge_changes_table(target) }}
    {%- endcall -%}
{% endmacro %}


{% macro action_merge_store_changes(inserted, updated, deleted) %}
    {#-
        Keep what the merge is about to change in the model's context as its
        result, for action_merge_report to add what compaction did.
    -#}
    {%- do visitor_lookup_carry(model.name, {'inserted': inserted, 'updated': updated, 'deleted': deleted}) -%}
    {%- for name in ['action_merge_changes', 'main'] -%}
        {%- do store_raw_result(
            name,
            message=inserted ~ ' inserted, ' ~ updated ~ ' updated, ' ~ deleted ~ ' deleted',
            code='action_merge',
            rows_affected=inserted + updated + deleted,
        ) -%}
    {%- endfor -%}
{% endmacro %}


{% macro action_merge_report(relation) %}
    {#-
        Called by action_merge after the model's post-hooks:
        the model's result, which dbt prints in its line for the model and
        keeps in run_results.json and in on-run-end's results, says what the
        run changed in the table, e.g. '12 inserted, 3 updated, 0 deleted'
        (a table built anew: its row count, '1200 inserted'), followed by
        what compaction did when the table was compacted. The run history
        (visitor_lookup_record_run) reads the counts from there.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set changes = load_result('action_merge_changes') -%}
    {%- if changes is none -%}
        {%- set built = run_query('select count(*) as row_count from ' ~ relation).rows[0]['row_count'] -%}
        {%- set parts = [built ~ ' inserted'] -%}
        {%- set rows_affected = built -%}
        {%- do visitor_lookup_carry(model.name, {'inserted': built}) -%}
    {%- else -%}
        {%- set parts = [changes.response | string] -%}
        {%- set rows_affected = changes.response.rows_affected -%}
    {%- endif -%}
    {%- set compaction = load_result('visitor_lookup_compaction') -%}
    {%- if compaction is not none -%}
        {%- do parts.append(compaction.response | string) -%}
        {%- do visitor_lookup_carried(model.name).update({'compaction': 1}) -%}
    {%- endif -%}
    {%- do store_raw_result('main', message=parts | join(', '), code='action_merge', rows_affected=rows_affected) -%}
    {{ return('') }}
{% endmacro %}


{% macro action_merge_statement(target, source, predicates, keys, columns) %}
    merge into {{ target }} as target
    using {{ source }} as source
    on {{ predicates | join(' and ') }}
    when matched and source.merge_action = 'delete' then delete
    when matched then update set
    {%- for column in columns if column not in keys %}
        target.{{ column }} = source.{{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}


{% macro action_merge_changes(rebuilt, stored, key_columns, value_columns) %}
    {#-
        The change set between the rows a model rebuilt and the stored rows
        they replace (both CTE names, with the same columns): rebuilt rows
        that are new ('insert') or differ ('update'), stored rows no longer
        rebuilt ('delete'). Unchanged rows are left out, so the merge does not
        touch them. One full outer join: each side is read once (a left join
        plus an anti join read both twice, and Spark computes a CTE anew for
        every reference). The first key column is never NULL on either side,
        so its NULL says which side a row is missing from.
    -#}
    {%- set first_key = key_columns[0] -%}
    {%- set joined_on = [] -%}
    {%- for key in key_columns -%}
        {%- do joined_on.append(rebuilt ~ '.' ~ key ~ ' = ' ~ stored ~ '.' ~ key) -%}
    {%- endfor -%}
    {%- set differs = [stored ~ '.' ~ first_key ~ ' is null', rebuilt ~ '.' ~ first_key ~ ' is null'] -%}
    {%- for column in value_columns -%}
        {%- do differs.append('not ' ~ rebuilt ~ '.' ~ column ~ ' <=> ' ~ stored ~ '.' ~ column) -%}
    {%- endfor -%}
    select
        {%- for column in key_columns + value_columns %}
        case when {{ rebuilt }}.{{ first_key }} is null then {{ stored }}.{{ column }} else {{ rebuilt }}.{{ column }} end
            as {{ column }},
        {%- endfor %}
        case
            when {{ stored }}.{{ first_key }} is null then 'insert'
            when {{ rebuilt }}.{{ first_key }} is null then 'delete'
            else 'update'
        end as merge_action
    from {{ rebuilt }}
    full outer join {{ stored }}
        on {{ joined_on | join(' and ') }}
    where {{ differs | join(' or ') }}
{% endmacro %}
