{#-
    dbt-spark admits the incremental strategy action_merge only through two
    plain macros of the root project (README, "As a package"): these hand
    both to the package, which passes every other strategy back to dbt-spark.
-#}

{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
    {{ return(visitor_lookup.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
{% endmacro %}


{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {{ return(visitor_lookup.dbt_spark_get_incremental_sql(
        strategy, source, target, existing, unique_key, incremental_predicates
    )) }}
{% endmacro %}
