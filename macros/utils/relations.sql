{% macro visitor_lookup_model_relation(model_name) %}
    {#- The relation of a model of this project, found in the graph (usable in hooks, where ref() is not). -#}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.package_name == project_name and node.name == model_name -%}
        {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("Visitor lookup: no model named " ~ model_name ~ " in this project.") }}
{% endmacro %}


{% macro visitor_lookup_timestamp_literal(value) %}
    {#- A Spark timestamp literal from 'YYYY-MM-DD HH:MM:SS[.ffffff]' text, or a typed NULL. -#}
    {%- if value is none -%}
        {{ return('cast(null as timestamp)') }}
    {%- endif -%}
    {{ return("timestamp'" ~ value ~ "'") }}
{% endmacro %}


{% macro visitor_lookup_timestamp_text(expression) %}
    {#- Render a timestamp as text in the session time zone (UTC), microseconds kept. -#}
    {{ return("date_format(" ~ expression ~ ", 'yyyy-MM-dd HH:mm:ss.SSSSSS')") }}
{% endmacro %}
