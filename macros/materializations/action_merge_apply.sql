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
    {#-
        Written, not a cached view: Spark drops the cache of every plan that
        reads the target as soon as the MERGE writes it. A model whose query
        only filters a per-run table (meta visitor_lookup_change_set_stored)
        has its change set written already: the query is read as it is.
    -#}
    {%- set stored = config.get('meta', {}).get('visitor_lookup_change_set_stored', false) -%}
    {%- if stored -%}
        {%- set changes = '(' ~ query ~ '\n) as change_set' -%}
    {%- else -%}
        {%- set changes = adapter.dispatch('action_merge_write_changes', 'visitor_lookup')(target, query) -%}
    {%- endif -%}
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
    {#- A model whose change set is stored has no folder of its own to clear. -#}
    {%- if not stored -%}
        {%- do adapter.dispatch('action_merge_clear_changes', 'visitor_lookup')(target) -%}
    {%- endif -%}
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
        the run's lease lapsed writes its own folder, never this run's.
    -#}
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
    {#- The table a model's change set is written to on Databricks. -#}
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
