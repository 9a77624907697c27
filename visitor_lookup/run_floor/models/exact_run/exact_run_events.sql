-- The events every exact run stores and compares new ones with. The first run (setup, not timed) stores
-- every event loaded up to run_floor__loaded_after; a later run reads the events loaded after it and up
-- to run_floor__loaded_until, and appends one copy of each whose id is not stored yet. No cleaning but
-- the drop of events without landed (no lookup table can place them, and a cookie seen only in them would
-- get a row without a date), no replacing of stored copies, no quarantine: less than any exact run does.
-- Each row keeps a 64-bit key of its id: on Iceberg a later run reads that column alone to find the files
-- holding its events' keys, and compares ids in those files only, as the project's processed_events does.
{{
    config(
        materialized='incremental',
        file_format=var('run_floor__file_format'),
        incremental_strategy='append',
    )
}}

{#- the events read: on the first run, the history, up to run_floor__loaded_after -#}
{%- set loaded_after = exact_run_loaded_after() %}
{%- set loaded_until = var('run_floor__loaded_until') if is_incremental() else var('run_floor__loaded_after') %}
{%- set events_path = var('run_floor__events_path') %}
{%- set run_events_filter -%}
landed is not null
and loaded_at > timestamp '{{ loaded_after }}'
and loaded_at <= timestamp '{{ loaded_until }}'
{%- endset %}
{%- set keys_of_run_events -%}
select xxhash64(event_id) from parquet.`{{ events_path }}` where {{ run_events_filter }}
{%- endset %}
{%- if is_incremental() %}
{%- set stored_rows = exact_run_rows_of_keys(this, keys_of_run_events) %}
{%- else %}
{%- set stored_rows = exact_run_this_or_empty({'event_id': 'string'}) %}
{%- endif %}

with source_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from parquet.`{{ events_path }}`
    where {{ run_events_filter }}
),

stored_ids as (
    -- the stored ids among the new events': those that may match (on Iceberg, the ids of the files holding
    -- a matching key) stream past the broadcast new events once
    select /*+ broadcast(source_events) */ stored_events.event_id
    from {{ stored_rows }} as stored_events
    left semi join source_events
        on stored_events.event_id = source_events.event_id
),

unseen_events as (
    select
        source_events.event_id,
        source_events.visitor_cookie_id,
        source_events.user_id,
        source_events.landed,
        source_events.loaded_at
    from source_events
    left anti join stored_ids
        on source_events.event_id = stored_ids.event_id
),

ranked_copies as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        row_number() over (partition by event_id order by loaded_at) as copy_rank
    from unseen_events
)

select
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    xxhash64(event_id) as event_key
from ranked_copies
where copy_rank = 1
