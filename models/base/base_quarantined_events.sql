{#-
    Invalid events exactly as received, with the reason. Keyed by a hash of
    the received row, so an event read again by a later run (lookback, or a
    NULL loaded_at) is recorded once; identical copies are one row.
-#}
{{
    config(
        materialized='incremental',
        alias='quarantined_events',
        incremental_strategy='merge',
        unique_key='quarantine_key',
        merge_exclude_columns=['first_quarantined_at'],
        tags=['visitor_lookup_incremental'],
    )
}}

with invalid_events as (
    select
        event_id,
        received_visitor_cookie_id,
        received_user_id,
        landed,
        loaded_at,
        invalid_reason
    from {{ ref('base_events_this_run') }}
    where invalid_reason is not null
),

keyed_events as (
    select
        event_id,
        received_visitor_cookie_id,
        received_user_id,
        landed,
        loaded_at,
        invalid_reason,
        sha2(to_json(named_struct(
            'event_id', event_id,
            'visitor_cookie_id', received_visitor_cookie_id,
            'user_id', received_user_id,
            'landed', landed,
            'loaded_at', loaded_at
        )), 256) as quarantine_key
    from invalid_events
),

distinct_events as (
    select
        quarantine_key,
        event_id,
        received_visitor_cookie_id,
        received_user_id,
        landed,
        loaded_at,
        invalid_reason,
        row_number() over (partition by quarantine_key order by quarantine_key) as copy_rank
    from keyed_events
)

select
    quarantine_key,
    event_id,
    received_visitor_cookie_id as visitor_cookie_id,
    received_user_id as user_id,
    landed,
    loaded_at,
    invalid_reason,
    current_timestamp() as first_quarantined_at
from distinct_events
where copy_rank = 1
