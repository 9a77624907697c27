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
    {%- for name in visitor_lookup_incremental_models() + ['base_incremental_manifest']
        if ('model.visitor_lookup.' ~ name) in selected_resources -%}
        {%- do refreshed.append('the manifest' if name == 'base_incremental_manifest' else name) -%}
    {%- endfor -%}
    {%- if refreshed -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: --full-refresh would drop and rebuild " ~ refreshed | join(', ')
            ~ " from the raw events. If every raw event since visitor_lookup__start_date is still "
            ~ "there, run again with --vars '{\"visitor_lookup__allow_refresh\": true}'."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
