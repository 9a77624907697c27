{% macro visitor_lookup_model_relation(model_name) %}
    {#-
        The relation of a model of this project, found in the graph (usable in
        hooks, where ref() is not). By package name, not project_name, which
        names the host project when this one is installed as a package.
    -#}
    {%- if not execute -%}
        {#- Parsing: the graph is not there yet; a name to render, never queried. -#}
        {{ return(api.Relation.create(identifier=model_name)) }}
    {%- endif -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.package_name == 'visitor_lookup' and node.name == model_name -%}
        {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("Visitor lookup: no model named " ~ model_name ~ " in this project.") }}
{% endmacro %}


{% macro visitor_lookup_relation_beside_manifest(identifier) %}
    {#- A table the hooks keep (run_lock, visitor_lookup_runs): in the manifest's schema. -#}
    {%- set manifest = visitor_lookup_model_relation('incremental_manifest') -%}
    {{ return(api.Relation.create(database=manifest.database, schema=manifest.schema, identifier=identifier)) }}
{% endmacro %}


{% macro visitor_lookup_kept_table_options(kind='kept', configured=none) %}
    {#-
        The `using` and `tblproperties` clauses of a table the project keeps
        (created by the hooks or by the materialization action_merge), in the
        table format of this run's session, with a model's own tblproperties
        config (`configured`) over the project's defaults.
    -#}
    using {{ visitor_lookup_table_format() }}
    {%- set properties = visitor_lookup_table_properties(kind, configured) %}
    {%- if properties %}
    tblproperties ({{ visitor_lookup_property_list(properties) }})
    {%- endif %}
{% endmacro %}


{% macro visitor_lookup_property_list(properties) %}
    {#- The inside of a tblproperties or options clause: 'name' = 'value', one per line. -#}
    {%- for name, value in properties.items() %}
        '{{ name }}' = '{{ value }}'{{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}


{% macro visitor_lookup_existing(relation) %}
    {#- The relation as the warehouse has it, or none when it does not exist yet (or while parsing). -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(adapter.get_relation(
        database=relation.database, schema=relation.schema, identifier=relation.identifier
    )) }}
{% endmacro %}


{% macro visitor_lookup_this_or_empty(columns) %}
    {#-
        What an incremental model has stored so far: the table itself, or on
        the first build (and --full-refresh) an empty relation with the given
        columns ({name: type}, in order), so one query serves both.
    -#}
    {%- if visitor_lookup_is_incremental() -%}
        {{ return(this) }}
    {%- endif -%}
    {{ return(visitor_lookup_empty_relation(columns)) }}
{% endmacro %}


{% macro visitor_lookup_stored_rows(columns, key_column, keys) %}
    {#-
        The stored rows an incremental model compares with: those whose
        key_column is among `keys` (a query of one column), and possibly
        others, as the model joins on its own key anyway. On Iceberg only the
        data files holding one of the keys are read (stored_rows_iceberg),
        elsewhere the whole table; on the first build an empty relation with
        the given columns ({name: type}, in order).
    -#}
    {%- if not visitor_lookup_is_incremental() -%}
        {{ return(visitor_lookup_empty_relation(columns)) }}
    {%- endif -%}
    {%- set stored = adapter.get_relation(this.database, this.schema, this.identifier) -%}
    {%- if visitor_lookup_table_format() != 'iceberg' or key_column not in visitor_lookup_stored_columns(stored) -%}
        {{ return(this) }}
    {%- endif -%}
    {{ return(adapter.dispatch('stored_rows_iceberg', 'visitor_lookup')(stored, columns, key_column, keys)) }}
{% endmacro %}


{% macro default__stored_rows_iceberg(relation, columns, key_column, keys) %}
    {#-
        One statement reads the key column alone and names the data files
        with a matching key (or a key not filled yet); the model then reads
        those files directly, as Iceberg does not skip files by a filter on
        _file. Data files are the table's rows only while it has no delete
        files, so with any the whole table is read.
    -#}
    {%- set found -%}
        select
            to_json(collect_set(_file)) as data_files,
            (select count(*) from {{ relation }}.delete_files) as delete_files
        from {{ relation }}
        where {{ key_column }} is null or {{ key_column }} in ({{ keys }})
    {%- endset -%}
    {%- set row = run_query(found).rows[0] -%}
    {%- if row['delete_files'] > 0 -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set data_files = fromjson(row['data_files']) | sort -%}
    {%- if not data_files -%}
        {{ return(visitor_lookup_empty_relation(columns)) }}
    {%- endif -%}
    {%- set rows_of_data_files -%}
        (
        {%- for data_file in data_files %}
            select
            {%- for name, type in columns.items() %}
                cast({{ name }} as {{ type }}) as {{ name }}{{ ',' if not loop.last }}
            {%- endfor %}
            from parquet.`{{ data_file | replace('`', '``') }}`
            {{- ' union all' if not loop.last }}
        {%- endfor %}
        )
    {%- endset -%}
    {{ return(rows_of_data_files) }}
{% endmacro %}


{% macro visitor_lookup_stored_columns(relation) %}
    {#-
        The lowercase column names of a table, from dbt's listing of its
        schema (the relation's information) with no statement, or where the
        listing gives none, from DESCRIBE.
    -#}
    {%- set listed = visitor_lookup_listed_columns(relation) -%}
    {%- if listed -%}
        {{ return(listed) }}
    {%- endif -%}
    {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list) }}
{% endmacro %}


{% macro visitor_lookup_empty_relation(columns) %}
    {#- A relation with the given columns ({name: type}, in order) and no row. -#}
    {%- set casts = [] -%}
    {%- for name, type in columns.items() -%}
        {%- do casts.append('cast(null as ' ~ type ~ ') as ' ~ name) -%}
    {%- endfor -%}
    {{ return('(select ' ~ casts | join(', ') ~ ' where false)') }}
{% endmacro %}


{% macro spark__drop_relation(relation) %}
    {#-
        dbt-spark's drop (dbt dispatches to the root project first, or to this
        package where a host's dispatch config names it), with PURGE for the
        tables of models written outside Delta: through the Iceberg session
        catalog a plain DROP TABLE removes the metastore entry and leaves the
        files, so disk use grew with every --full-refresh, and the next CREATE
        of a Parquet table failed on its leftover location. The relation's
        own provider decides (dbt-spark reads it from the catalog): a
        dispatched macro runs in its caller's namespace, where this package's
        macros are out of reach. A host project's own relations get
        dbt-spark's drop unchanged.
    -#}
    {%- set ours = graph.nodes.values() | selectattr('package_name', 'equalto', 'visitor_lookup')
        | selectattr('schema', 'equalto', relation.schema) | selectattr('alias', 'equalto', relation.identifier)
        | list -%}
    {%- if not ours -%}
        {{ return(dbt.spark__drop_relation(relation)) }}
    {%- endif -%}
    {%- set purge = relation.type == 'table' and not relation.is_delta -%}
    {% call statement('drop_relation', auto_begin=False) -%}
        drop {{ relation.type }} if exists {{ relation }}{{ ' purge' if purge }}
    {%- endcall %}
{% endmacro %}


{% macro databricks__drop_relation(relation) %}
    {#-
        dbt-databricks' own drop (views, materialized views, streaming tables;
        no PURGE): without this, dbt would find spark__drop_relation above in
        the root project before dbt-databricks' macro.
    -#}
    {{ return(dbt.databricks__drop_relation(relation)) }}
{% endmacro %}


{% macro visitor_lookup_tables_in_schema(schema) %}
    {#- The names of the tables the metastore has in the schema, asked once per invocation, lowercase. -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- set key = 'tables_in_' ~ schema | lower -%}
    {%- if key not in cache -%}
        {%- set names = [] -%}
        {%- for row in run_query('show tables in ' ~ schema).rows -%}
            {%- do names.append(row[1] | lower) -%}
        {%- endfor -%}
        {%- do cache.update({key: names}) -%}
    {%- endif -%}
    {{ return(cache[key]) }}
{% endmacro %}


{% macro visitor_lookup_confirm_absent(relations) %}
    {#-
        Stop the run when the metastore has a table that dbt's listing of its
        schema left out: dbt-spark takes a listing that failed (a metastore
        error) for an empty schema, and would create the table anew over
        what it holds.
    -#}
    {%- for relation in relations
        if relation.identifier | lower in visitor_lookup_tables_in_schema(relation.schema) -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: dbt's listing of schema " ~ relation.schema ~ " left out " ~ relation
            ~ ", which the metastore has: the listing failed (a metastore error?). Nothing was changed; "
            ~ "run again once the metastore answers."
        ) }}
    {%- endfor -%}
{% endmacro %}


{% macro visitor_lookup_clear_leftover_locations() %}
    {#-
        on-run-start, before any table is created: a run killed while Spark
        created or dropped a Parquet or Delta table can leave its folder
        without a metastore entry, and Spark then refuses to create the
        table there ([LOCATION_ALREADY_EXISTS], or Delta's
        DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION) on every later run.
        Clears the folders of the tables this invocation may create that
        dbt's listing does not have: the selected models (Iceberg's tables
        need nothing, their files have unique names) and, when the run
        changes state, the tables the hooks keep (run_lock's folder is
        cleared by visitor_lookup_take_run_lock, before it creates that
        table; this runs once the lock is held). No statement while they
        all exist.
    -#}
    {%- if not execute or flags.WHICH not in ['run', 'build', 'retry'] -%}
        {{ return('') }}
    {%- endif -%}
    {%- set created = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.package_name == 'visitor_lookup'
        and node.config.materialized in ['scratch_table', 'action_merge']
        and (visitor_lookup_table_format() if node.config.materialized == 'action_merge'
            else node.config.file_format) != 'iceberg'
        and visitor_lookup_selected(node.name) -%}
        {%- do created.append(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {%- if visitor_lookup_changes_state() and visitor_lookup_table_format() != 'iceberg' -%}
        {%- do created.append(visitor_lookup_relation_beside_manifest('visitor_lookup_runs')) -%}
        {%- do created.append(visitor_lookup_erasure_requests_relation()) -%}
    {%- endif -%}
    {%- do visitor_lookup_clear_absent_tables_folders(created) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_clear_absent_tables_folders(relations) %}
    {#-
        Of `relations` (tables of a format that refuses a folder left
        behind), those dbt's listing does not have: the metastore asked
        once whether they are really absent, then their folders cleared
        (dispatched: what clears a folder depends on the catalog).
    -#}
    {%- set absent = [] -%}
    {%- for relation in relations if visitor_lookup_existing(relation) is none -%}
        {%- do absent.append(relation) -%}
    {%- endfor -%}
    {%- if absent -%}
        {%- do visitor_lookup_confirm_absent(absent) -%}
        {%- do adapter.dispatch('clear_leftover_locations', 'visitor_lookup')(absent) -%}
    {%- endif -%}
{% endmacro %}


{% macro default__clear_leftover_locations(relations) %}
    {#-
        Per schema, one managed stand-in table, partitioned, gets each
        folder as a partition's location and is dropped with PURGE: the
        metastore deletes the partitions' folders (a folder that does not
        exist is no matter), on whatever file system the warehouse is, in
        three statements however many tables. Its partitions only ever
        point at folders of tables that do not exist: a stand-in left by a
        run killed here is taken up and dropped by the next run that clears
        anything, before that run creates any of them.
    -#}
    {%- set by_schema = {} -%}
    {%- for relation in relations -%}
        {%- do by_schema.setdefault(relation.schema, []).append(relation) -%}
    {%- endfor -%}
    {%- for schema, in_schema in by_schema.items() -%}
        {%- set found = namespace(location=none) -%}
        {%- for row in run_query('describe schema extended ' ~ schema).rows if row[0] == 'Location' -%}
            {%- set found.location = row[1] -%}
        {%- endfor -%}
        {%- set stand_in = in_schema[0].incorporate(path={'identifier': 'visitor_lookup__leftover_folders'}) -%}
        {%- call statement('visitor_lookup_create_stand_in') -%}
            create table if not exists {{ stand_in }} (leftover int, folder string)
            using parquet
            partitioned by (folder)
        {%- endcall -%}
        {%- call statement('visitor_lookup_point_stand_in') -%}
            alter table {{ stand_in }} add if not exists
            {%- for relation in in_schema %}
                partition (folder = '{{ relation.identifier | lower }}')
                location '{{ found.location }}/{{ relation.identifier | lower }}'
            {%- endfor %}
        {%- endcall -%}
        {%- call statement('visitor_lookup_drop_stand_in') -%}
            drop table {{ stand_in }} purge
        {%- endcall -%}
    {%- endfor -%}
{% endmacro %}


{% macro databricks__clear_leftover_locations(relations) %}
    {#- Unity Catalog places each managed table in a folder of its own: nothing is left in the way. -#}
{% endmacro %}


{% macro visitor_lookup_source_relation(source_name, table_name) %}
    {#- One of the project's sources, found in the graph (hooks and operations have no source()). -#}
    {%- if not execute -%}
        {{ return(api.Relation.create(identifier=table_name)) }}
    {%- endif -%}
    {%- for node in graph.sources.values()
        if node.package_name == 'visitor_lookup' and node.source_name == source_name and node.name == table_name -%}
        {{ return(api.Relation.create(
            database=node.database, schema=node.schema, identifier=node.identifier,
            quote_policy={'identifier': true} if node.quoting.identifier else {}
        )) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("Visitor lookup: the source " ~ source_name ~ " is missing from the graph.") }}
{% endmacro %}
