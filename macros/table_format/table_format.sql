{#-
    What differs between the table formats the models are written in, and
    where the models go: each model's config() calls visitor_lookup_schema
    (and the per-run tables' visitor_lookup_scratch_file_format); the kept
    tables take their format when a run creates them
    (visitor_lookup_table_format, read from the session).
-#}

{% macro visitor_lookup_table_format() %}
    {#-
        iceberg or delta: the var visitor_lookup__file_format, or when it is
        empty Delta on Databricks, and on Spark the format whose catalog the
        session has as its spark_catalog (Iceberg's SparkSessionCatalog or
        Delta's DeltaCatalog), read when the run starts: never a target's
        name. None while dbt parses, when nothing needs it.
    -#}
    {%- set chosen = var('visitor_lookup__file_format') -%}
    {%- if chosen and chosen not in ['iceberg', 'delta'] -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__file_format must be 'iceberg', 'delta' or empty "
            ~ "(chosen by the target), got '" ~ chosen ~ "'."
        ) }}
    {%- endif -%}
    {%- if chosen == 'iceberg' and target.type == 'databricks' -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__file_format is 'iceberg', but on Databricks the models "
            ~ "are Delta tables (dbt-databricks refuses file_format iceberg): set it to 'delta' or leave it empty."
        ) }}
    {%- endif -%}
    {%- if chosen -%}
        {{ return(chosen) }}
    {%- elif target.type == 'databricks' -%}
        {{ return('delta') }}
    {%- elif not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set catalog = visitor_lookup_session_settings()['session_catalog'] -%}
    {%- for format in ['iceberg', 'delta'] if format in catalog | lower -%}
        {{ return(format) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Visitor lookup: the session catalog (spark.sql.catalog.spark_catalog = '" ~ catalog ~ "') is "
        ~ "neither Iceberg's SparkSessionCatalog nor Delta's DeltaCatalog, so the table format is unknown. "
        ~ "Set it in the profile's server_side_parameters (or the Thrift Server's configuration), or set "
        ~ "var visitor_lookup__file_format to 'iceberg' or 'delta'."
    ) }}
{% endmacro %}


{% macro visitor_lookup_schema() %}
    {#- The models' custom schema: visitor_lookup__schema, or none (the target's schema) when it is empty. -#}
    {{ return(visitor_lookup_var_schema_name('visitor_lookup__schema')) }}
{% endmacro %}


{% macro visitor_lookup_is_delta_target() %}
    {{ return(visitor_lookup_table_format() == 'delta') }}
{% endmacro %}


{% macro visitor_lookup_scratch_file_format() %}
    {{ return(visitor_lookup_storage(none)['scratch']['file_format']) }}
{% endmacro %}


{% macro visitor_lookup_drop_purge() %}
    {#- The clause that makes DROP TABLE of a per-run table remove its files too. -#}
    {{ return(visitor_lookup_storage(none)['scratch']['drop_clause']) }}
{% endmacro %}
