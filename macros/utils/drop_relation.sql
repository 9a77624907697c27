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
