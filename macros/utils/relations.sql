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


{% macro visitor_lookup_existing(relation) %}
    {#- The relation as the warehouse has it, or none when it does not exist yet (or while parsing). -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(adapter.get_relation(
        database=relation.database, schema=relation.schema, identifier=relation.identifier
    )) }}
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
