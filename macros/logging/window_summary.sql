{% macro visitor_lookup_log_window(events_this_run) %}
    {#-
        Post-hook of base_events_this_run: log what this run's range held and
        how many events it quarantined, and make it the model's result (dbt's
        line for the model, run_results.json, the run history); warn when
        the range held nothing, unless the run read no lookback at all (no
        file changed, so nothing new was expected). The same statement finds the
        greatest loaded_at within the range, which the manifest's update
        needs (visitor_lookup_window_loaded_through).
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set limits = visitor_lookup_run_limits(visitor_lookup_model_relation('base_new_event_limits')) -%}
    {%- set upper_limit = limits.upper_limit -%}
    {%- set query -%}
        select
            count(*) as events_read,
            count_if(invalid_reason is null and copy_rank = 1) as valid_events,
            count_if(invalid_reason is null and copy_rank > 1) as duplicate_copies,
            count_if(invalid_reason is not null) as quarantined_events,
            {{ visitor_lookup_timestamp_text(
                'max(case when loaded_at <= ' ~ visitor_lookup_timestamp_literal(upper_limit) ~ ' then loaded_at end)'
            ) }} as loaded_through
        from {{ events_this_run }}
    {%- endset -%}
    {%- set counts = run_query(query).rows[0] -%}
    {%- do visitor_lookup_carry(model.name, {
        'read': counts['events_read'], 'valid': counts['valid_events'],
        'duplicate': counts['duplicate_copies'], 'quarantined': counts['quarantined_events'],
        'loaded_through': counts['loaded_through'],
    }) -%}
    {%- if counts['events_read'] == 0 and (limits.reads_lookback or limits.new_files) -%}
        {%- do exceptions.warn(
            "Visitor lookup: no events in this run's loaded_at range. If that is unexpected, check "
            ~ "VISITOR_LOOKUP_EVENTS_PATH (local) or the events table vars, move visitor_lookup__start_date, "
            ~ "or raise visitor_lookup__backfill_limit_days. The state still moves forward."
        ) -%}
    {%- endif -%}
    {%- do store_raw_result(
        'main',
        message=counts['events_read'] ~ ' read, ' ~ counts['valid_events'] ~ ' valid, '
            ~ counts['duplicate_copies'] ~ ' duplicate, ' ~ counts['quarantined_events'] ~ ' quarantined',
        code='window',
        rows_affected=counts['events_read'],
    ) -%}
    {%- do log(
        "Visitor lookup: read " ~ counts['events_read'] ~ " events: " ~ counts['valid_events'] ~ " valid, "
        ~ counts['duplicate_copies'] ~ " duplicate copies ignored, " ~ counts['quarantined_events']
        ~ " quarantined (invalid, see quarantined_events)",
        info=True,
    ) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_window_loaded_through(limits) %}
    {#-
        The greatest loaded_at of the window's events within this run's
        range (not the events loaded in the future, which the window reads
        too and quarantines), as timestamp text, or none when it has none:
        as the window's summary found it when this invocation built the
        window, read from the window otherwise (dbt retry).
    -#}
    {%- set window = visitor_lookup_carried('base_events_this_run', {}) -%}
    {%- if 'loaded_through' in window -%}
        {{ return(window['loaded_through']) }}
    {%- endif -%}
    {%- set query -%}
        select {{ visitor_lookup_timestamp_text('max(loaded_at)') }} as loaded_through
        from {{ visitor_lookup_model_relation('base_events_this_run') }}
        where loaded_at <= {{ visitor_lookup_timestamp_literal(limits.upper_limit) }}
    {%- endset -%}
    {{ return(run_query(query).rows[0]['loaded_through']) }}
{% endmacro %}


{% macro visitor_lookup_window_holds(count) %}
    {#-
        How many events of the window's summary count this is ('read',
        'valid', 'quarantined'), as this invocation built the window; none
        when it did not (dbt retry), so that a model reading it cannot take
        an unread window for an empty one.
    -#}
    {{ return(visitor_lookup_carried('base_events_this_run', {}).get(count)) }}
{% endmacro %}
