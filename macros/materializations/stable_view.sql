{#-
    Materialization `stable_view`: a view replaced only when its definition
    changes. Through Iceberg's session catalog every view is an Iceberg
    view, and each replace writes one more metadata file that nothing ever
    deletes (Iceberg expires table snapshots, not view versions): the
    project's two views, replaced by every run as dbt's view
    materialization does, would add a file each per run for as long as it
    runs. The view keeps a digest of what it is made of (its name, its
    query, its columns as documented, the contract and the docs config) in
    the property visitor_lookup.definition. When the view already holds
    that digest, no statement is sent at all (dbt's listing of the schema
    has the view's properties; SHOW TBLPROPERTIES where it has not), and the
    contract's check of the query's columns, made by the replace, is not
    needed either. On Databricks the view is replaced as dbt-databricks
    replaces it.
-#}

{% materialization stable_view, default %}
    {%- set target_relation = this.incorporate(type='view') -%}
    {%- set existing = load_cached_relation(this) -%}
    {{ run_hooks(pre_hooks) }}
    {%- set digest = local_md5(tojson([
        target_relation | string, compiled_code, model.columns, model.description, model.contract,
        config.get('persist_docs'),
    ])) -%}
    {%- if target.type == 'spark' and existing is not none and existing.is_view
        and stable_view_digest(existing) == digest -%}
        {%- do store_raw_result('main', message='view unchanged', code='view', rows_affected=0) -%}
    {%- else -%}
        {%- if existing is not none and not existing.is_view -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- set definition = get_create_view_as_sql(target_relation, compiled_code) -%}
        {%- call statement('main') -%}
            {%- if target.type == 'spark' -%}
                {{ visitor_lookup_with_property(definition, 'visitor_lookup.definition', digest) }}
            {%- else -%}
                {{ definition }}
            {%- endif -%}
        {%- endcall -%}
    {%- endif -%}
    {%- do apply_grants(target_relation, config.get('grants'), should_revoke(existing, full_refresh_mode=True)) -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro stable_view_digest(existing) %}
    {#- The definition digest a view holds, or none. -#}
    {%- set listed = visitor_lookup_listed_property(existing, 'visitor_lookup.definition') -%}
    {%- if listed is not none -%}
        {{ return(listed) }}
    {%- endif -%}
    {%- set stored = run_query("show tblproperties " ~ existing ~ " ('visitor_lookup.definition')").rows
        | map('last') | list -%}
    {{ return(stored[0] if stored else none) }}
{% endmacro %}


{% macro visitor_lookup_with_property(definition, name, value) %}
    {#-
        A CREATE statement of dbt's (a view's, ending with `as` and the
        query) with one table property more, placed before the `as`.
        Unchanged when it has no such `as` line: the property is then
        missing, and what relies on it takes the long way.
    -#}
    {{ return(modules.re.sub(
        '\\n(\\s*)as\\n',
        "\n\\1tblproperties ('" ~ name ~ "' = '" ~ value ~ "')\n\\1as\n",
        definition,
        count=1,
    )) }}
{% endmacro %}
