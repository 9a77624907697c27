-- No stored event was loaded after the point the incremental set has
-- processed through: the manifest's position, or this run's upper limit
-- while the run is under way (dbt build tests processed_events before the
-- on-run-end hook advances the manifest). State and data agree. That point
-- is read first and written into the check as a literal: the statistics of
-- loaded_at then skip every file of processed_events with nothing later, so
-- the check reads no stored event unless one breaks it.
{%- set through_query -%}
    with manifest as (
        select max(last_success) as processed_through
        from {{ ref('visitor_lookup', 'incremental_manifest') }}
    ),

    run_limits as (
        select max(upper_limit) as upper_limit
        from {{ ref('visitor_lookup', 'base_new_event_limits') }}
    )

    -- one row, whatever the tables hold
    select
        {{ visitor_lookup_timestamp_text('greatest(manifest.processed_through, run_limits.upper_limit)') }}
        as processed_through
    from manifest
    cross join run_limits
{%- endset %}
{%- set processed_through = none -%}
{%- if execute -%}
{%- set processed_through = visitor_lookup_fetch_once('processed through', through_query)['processed_through'] -%}
{%- endif %}

with processed as (
    select
        event_id,
        loaded_at
    from {{ ref('visitor_lookup', 'processed_events') }}
)

select
    event_id,
    loaded_at,
    {{ visitor_lookup_timestamp_literal(processed_through) }} as processed_through
from processed
where loaded_at > {{ visitor_lookup_timestamp_literal(processed_through) }}
