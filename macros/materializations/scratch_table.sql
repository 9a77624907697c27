{#-
    Materialization `scratch_table`: a per-run table, written again by every
    run. dbt's table materialization drops the table and creates it, two
    statements; here the table is overwritten in place, one. The table's
    columns are the ones the model's YAML declares, each cast to its
    data_type, so a run's query gives the same columns of the same types
    whatever it reads (a full build's, a run's with erasures). dbt-spark's
    configs options, location_root and tblproperties reach the table as
    they would a table of dbt's, the options over the project's write
    options. The columns and configs the table was created with are kept,
    hashed, in the table property visitor_lookup.shape, which dbt's listing
    of the schema shows; a table of another shape (a new version of the
    project's, a changed config) is dropped and created, as dbt does.
-#}

{% materialization scratch_table, default %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing = load_cached_relation(this) -%}
    {%- set columns = scratch_table_columns() -%}
    {%- set typed_query -%}
        select
        {%- for column in columns %}
            cast({{ column.name }} as {{ column.data_type }}) as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
        from (
            {{ compiled_code }}
        ) as model_query
    {%- endset -%}
    {%- set options = {} -%}
    {%- do options.update(visitor_lookup_storage(none)['scratch']['options']) -%}
    {%- do options.update(config.get('options') or {}) -%}
    {%- set properties = visitor_lookup_configured_properties(config.get('tblproperties')) -%}
    {{ run_hooks(pre_hooks) }}
    {%- set shape = local_md5(tojson([
        target_relation | string, config.get('file_format'), options, config.get('location_root'),
        properties, columns,
    ])) -%}
    {%- do properties.update({'visitor_lookup.shape': shape}) -%}
    {%- set same_shape = existing is not none and existing.is_table
        and visitor_lookup_listed_property(existing, 'visitor_lookup.shape') == shape -%}
    {#-
        A Parquet table at a location_root is external: its drop (or a
        killed run) leaves its files in its folder (location_root/<name>),
        where Spark's CTAS refuses to write. There the table is created with
        its declared columns, and the insert overwrite replaces those files.
    -#}
    {%- set own_folder = config.get('location_root') and config.require('file_format') == 'parquet' -%}
    {%- if not same_shape -%}
        {%- if existing is not none -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- call statement('create_table' if own_folder else 'main') -%}
            create table {{ target_relation }}
            {%- if own_folder %} (
                {%- for column in columns %}
                {{ column.name }} {{ column.data_type }}{{ ',' if not loop.last }}
                {%- endfor %}
            )
            {%- endif %}
            using {{ config.require('file_format') }}
            {%- if options %}
            options ({{ visitor_lookup_property_list(options) }})
            {%- endif %}
            {{- location_clause() }}
            tblproperties ({{ visitor_lookup_property_list(properties) }})
            {%- if not own_folder %}
            as
            {{ typed_query }}
            {%- endif %}
        {%- endcall -%}
    {%- endif -%}
    {%- if same_shape or own_folder -%}
        {%- call statement('main') -%}
            insert overwrite table {{ target_relation }}
            {{ typed_query }}
        {%- endcall -%}
    {%- endif -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro scratch_table_columns() %}
    {#-
        The model's columns as its YAML declares them, in order, each with
        its data_type; a scratch table's model must declare every column it
        keeps, typed.
    -#}
    {%- set columns = [] -%}
    {%- for column in model.columns.values() -%}
        {%- if not column.data_type -%}
            {%- do exceptions.raise_compiler_error(
                "Visitor lookup: column " ~ column.name ~ " of " ~ model.name ~ " has no data_type: declare "
                ~ "one under it in the model's YAML (a scratch_table's table has the declared columns, each "
                ~ "cast to its type)"
            ) -%}
        {%- endif -%}
        {%- do columns.append({'name': column.name, 'data_type': column.data_type}) -%}
    {%- endfor -%}
    {%- if not columns -%}
        {%- do exceptions.raise_compiler_error(
            "Visitor lookup: " ~ model.name ~ " declares no columns in its YAML; a scratch_table's table has "
            ~ "the columns its YAML declares, each with its data_type"
        ) -%}
    {%- endif -%}
    {{ return(columns) }}
{% endmacro %}
