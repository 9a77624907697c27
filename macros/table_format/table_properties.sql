{#-
    What differs between the table formats the models are written in.
    Iceberg on every target but Delta ones; the file_format config in
    dbt_project.yml applies the same rule (dbt_project.yml cannot call macros).
-#}

{% macro visitor_lookup_is_delta_target() %}
    {{ return('delta' in target.name or target.type == 'databricks') }}
{% endmacro %}


{% macro visitor_lookup_lookup_table_properties() %}
    {{ return(adapter.dispatch('lookup_table_properties', 'visitor_lookup')()) }}
{% endmacro %}


{% macro default__lookup_table_properties() %}
    {#-
        The lookup tables take small merges spread over every partition.
        Iceberg's default copy-on-write rewrites each data file a merge
        touches (for a merge over all prefixes: the whole table); merge-on-read
        writes delete files instead, which compaction folds in later.
        Delta tables keep their defaults (deletion vectors where enabled).
        The var visitor_lookup__lookup_write_mode switches Iceberg's mode for
        new tables (docs/benchmarks.md compares the two).
    -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set mode = visitor_lookup_lookup_write_mode() -%}
    {{ return({
        'format-version': '2',
        'write.delete.mode': mode,
        'write.update.mode': mode,
        'write.merge.mode': mode,
    }) }}
{% endmacro %}
