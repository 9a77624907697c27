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
