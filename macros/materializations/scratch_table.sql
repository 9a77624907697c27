{#-
    Materialization `scratch_table`: a per-run table, written again by every
    run. dbt's table materialization drops the table and creates it, two
    statements; here the table is overwritten in place, one, when it was
    created from a query of the same shape (scratch_table_shape), kept in
    the table property visitor_lookup.shape, which dbt's listing of the
    schema shows. Queries of one shape give the same columns of the same
    types, so INSERT OVERWRITE puts every value in its column. Any other
    query (a full build's, a new version of the project's) drops the table
    and creates it, as dbt does.
-#}

{% materialization scratch_table, default %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing = load_cached_relation(this) -%}
    {{ run_hooks(pre_hooks) }}
    {%- set shape = local_md5(tojson([
        target_relation | string, config.get('file_format'), config.get('options'), scratch_table_shape(compiled_code),
    ])) -%}
    {%- if existing is not none and existing.is_table
        and ('visitor_lookup.shape=' ~ shape) in (existing.information or '') -%}
        {%- call statement('main') -%}
            insert overwrite table {{ target_relation }}
            {{ compiled_code }}
        {%- endcall -%}
    {%- else -%}
        {%- if existing is not none -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- call statement('main') -%}
            {{ visitor_lookup_with_property(
                get_create_table_as_sql(False, target_relation, compiled_code), 'visitor_lookup.shape', shape
            ) }}
        {%- endcall -%}
    {%- endif -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro visitor_lookup_with_property(definition, name, value) %}
    {#-
        A CREATE statement of dbt's (a view's or a table's, ending with `as`
        and the query) with one table property more, placed before the
        `as`. Unchanged when it has no such `as` line: the property is then
        missing, and what relies on it takes the long way.
    -#}
    {{ return(modules.re.sub(
        '\\n(\\s*)as\\n',
        "\n\\1tblproperties ('" ~ name ~ "' = '" ~ value ~ "')\n\\1as\n",
        definition,
        count=1,
    )) }}
{% endmacro %}


{% macro scratch_table_shape(query) %}
    {#-
        A query with the values a run puts in it left out, and nothing that
        decides a column's type: its comments, every string literal's text, so that a
        timestamp literal and a typed NULL read alike (both cast to the same
        type), the elements of a cast string array, and integers of up to
        nine digits (a run's limits and numbers are literals; an integer
        that long is an int whatever its value, a decimal keeps its digits).
    -#}
    {#- A string literal (group 1 is its opening quote) becomes '', a comment nothing. -#}
    {%- set shape = modules.re.sub("(')(?:[^'\\\\]|\\\\.)*'|--[^\\n]*", "\\1\\1", query) -%}
    {%- set shape = modules.re.sub("\\btimestamp''", "cast('' as timestamp)", shape) -%}
    {%- set shape = modules.re.sub("\\bcast\\(null as ", "cast('' as ", shape) -%}
    {%- set shape = modules.re.sub("\\bcast\\(array\\(''(, '')*\\) as ", "cast(array() as ", shape) -%}
    {{ return(modules.re.sub('(?<![.])\\b[0-9]{1,9}\\b(?![.])', '0', shape)) }}
{% endmacro %}
