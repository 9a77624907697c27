{#-
    Snowplow-style guard against an unintended --full-refresh of the
    incremental set (on-run-start).
-#}

{% macro visitor_lookup_guard_full_refresh() %}
    {#-
        A --full-refresh that selects the manifest or a model of the
        incremental set drops what those tables hold (every processed event,
        the quarantine, the lookup history) and reads it all again from the
        raw events, which a team may no longer keep in full. Refused unless
        the var visitor_lookup__allow_refresh is true; a full refresh of any
        other model (base_new_event_limits, say) goes ahead.
    -#}
    {%- set allowed = visitor_lookup_var_boolean('visitor_lookup__allow_refresh') -%}
    {%- if not execute or not flags.FULL_REFRESH or allowed -%}
        {{ return('') }}
    {%- endif -%}
    {%- set refreshed = [] -%}
    {%- for node in graph.nodes.values()
        if node.unique_id in selected_resources and visitor_lookup_incremental_tag() in node.tags -%}
        {%- do refreshed.append(node.name) -%}
    {%- endfor -%}
    {%- set manifest_selected = graph.nodes.values()
        | selectattr('name', 'equalto', 'base_incremental_manifest')
        | selectattr('unique_id', 'in', selected_resources) | list -%}
    {%- if refreshed or manifest_selected -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: --full-refresh would drop and rebuild "
            ~ (refreshed | sort + (['the manifest'] if manifest_selected else [])) | join(', ')
            ~ " from the raw events. If every raw event since visitor_lookup__start_date is still "
            ~ "there, run again with --vars '{\"visitor_lookup__allow_refresh\": true}'."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
