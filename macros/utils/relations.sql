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
    {%- set manifest = visitor_lookup_model_relation('base_incremental_manifest') -%}
    {{ return(api.Relation.create(database=manifest.database, schema=manifest.schema, identifier=identifier)) }}
{% endmacro %}


{% macro visitor_lookup_kept_table_options() %}
    {#- The `using` and `tblproperties` clauses of a table the hooks create and keep. -#}
    using {{ visitor_lookup_table_format() }}
    {%- set properties = visitor_lookup_table_properties() %}
    {%- if properties %}
    tblproperties (
        {%- for name, value in properties.items() %}
        '{{ name }}' = '{{ value }}'{{ ',' if not loop.last }}
        {%- endfor %}
    )
    {%- endif %}
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
    {%- if is_incremental() -%}
        {{ return(this) }}
    {%- endif -%}
    {{ return(visitor_lookup_empty_relation(columns)) }}
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


{% macro spark__create_view_as(relation, sql) %}
    {#-
        dbt-spark's CREATE OR REPLACE VIEW, with the definition's digest kept
        in a view property, and nothing done when the view already holds
        that digest. Through Iceberg's session catalog every view is an
        Iceberg view, and each replace writes one more metadata file that
        nothing ever deletes (Iceberg expires table snapshots, not view
        versions): the project's two views, replaced by every run, would
        add a file each per run for as long as it runs. Runs in its caller's
        namespace (see spark__drop_relation): dbt builtins only. A host
        project's own views get dbt-spark's statement unchanged.
    -#}
    {%- set definition = dbt.spark__create_view_as(relation, sql) -%}
    {%- if model is not defined or model.package_name != 'visitor_lookup' -%}
        {{ return(definition) }}
    {%- endif -%}
    {%- set digest = local_md5(definition) -%}
    {%- set existing = adapter.get_relation(
        database=relation.database, schema=relation.schema, identifier=relation.identifier
    ) -%}
    {%- if execute and existing is not none and existing.is_view -%}
        {%- set stored = run_query(
            "show tblproperties " ~ relation ~ " ('visitor_lookup.definition')"
        ).rows -%}
        {%- if stored and stored[0][-1] == digest -%}
            {#- dbt runs the returned statement as the model's own: one that reads and writes nothing. -#}
            {{ return("select 'view unchanged' as visitor_lookup_view") }}
        {%- endif -%}
    {%- endif -%}
    {#- dbt-spark's statement ends with `as` and the query: the property goes before it. -#}
    {{ return(modules.re.sub(
        '\\n(\\s*)as\\n',
        "\n\\1tblproperties ('visitor_lookup.definition' = '" ~ digest ~ "')\n\\1as\n",
        definition,
        count=1,
    )) }}
{% endmacro %}


{% macro visitor_lookup_before_model() %}
    {#-
        The pre-hook of every model of the project: renew the run lock's
        lease when it is due, and clear what a killed run left where the
        model's table is about to be created. Emits no statement of its own.
    -#}
    {%- do visitor_lookup_renew_run_lock() -%}
    {%- if model.config.materialized in ['table', 'incremental'] -%}
        {%- do visitor_lookup_clear_leftover_location(this, model.config.file_format) -%}
    {%- endif -%}
    {{ return('') }}
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


{% macro visitor_lookup_clear_leftover_location(relation, file_format) %}
    {#-
        Before a Parquet or Delta table is created where none exists: a run
        killed while it created or dropped the table can leave its folder
        without a metastore entry, and Spark then refuses to create the
        table there ([LOCATION_ALREADY_EXISTS], or Delta's
        DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION) on every later run.
        Iceberg's tables do not care (their files have unique names).
        Dispatched: what clears a folder depends on the catalog.
    -#}
    {%- if not execute or file_format == 'iceberg' or visitor_lookup_existing(relation) is not none -%}
        {{ return('') }}
    {%- endif -%}
    {%- do visitor_lookup_confirm_absent([relation]) -%}
    {{ return(adapter.dispatch('clear_leftover_location', 'visitor_lookup')(relation)) }}
{% endmacro %}


{% macro default__clear_leftover_location(relation) %}
    {#-
        A managed stand-in table is pointed at the folder and dropped with
        PURGE, so the metastore deletes the folder, on whatever file system
        the warehouse is. Its own empty folder stays, harmless: an empty
        folder does not stop a create.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- set key = 'location_of_' ~ relation.schema | lower -%}
    {%- if key not in cache -%}
        {%- for row in run_query('describe schema extended ' ~ relation.schema).rows if row[0] == 'Location' -%}
            {%- do cache.update({key: row[1]}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set stand_in = relation.incorporate(path={'identifier': relation.identifier ~ '__leftover'}) -%}
    {%- call statement('visitor_lookup_create_stand_in') -%}
        create table if not exists {{ stand_in }} (leftover int) using parquet
    {%- endcall -%}
    {%- call statement('visitor_lookup_point_stand_in') -%}
        alter table {{ stand_in }} set location '{{ cache[key] }}/{{ relation.identifier | lower }}'
    {%- endcall -%}
    {%- call statement('visitor_lookup_drop_stand_in') -%}
        drop table {{ stand_in }} purge
    {%- endcall -%}
{% endmacro %}


{% macro databricks__clear_leftover_location(relation) %}
    {#- Unity Catalog places each managed table in a folder of its own: nothing is left in the way. -#}
{% endmacro %}
