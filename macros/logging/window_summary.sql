{% macro visitor_lookup_log_window(events_this_run) %}
    {#-
        Post-hook of base_events_this_run: log what this run's range held and
        how many events it quarantined, and make it the model's result (dbt's
        line for the model, run_results.json, the run history); warn when
        the range held nothing.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set query -%}
        select
            count(*) as events_read,
            count_if(invalid_reason is null and copy_rank = 1) as valid_events,
            count_if(invalid_reason is null and copy_rank > 1) as duplicate_copies,
            count_if(invalid_reason is not null) as quarantined_events
        from {{ events_this_run }}
    {%- endset -%}
    {%- set counts = run_query(query).rows[0] -%}
    {%- do visitor_lookup_carry(model.name, {
        'read': counts['events_read'], 'valid': counts['valid_events'],
        'duplicate': counts['duplicate_copies'], 'quarantined': counts['quarantined_events'],
    }) -%}
    {%- if counts['events_read'] == 0 -%}
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
