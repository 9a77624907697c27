{#-
    Invalid events exactly as received, with the reason. Keyed by a hash of
    the received row, so an event read again by a later run (lookback, or a
    NULL loaded_at) is recorded once; identical copies are one row. A stored
    row never changes: a run appends the keys it does not hold yet
    (action_merge with appended inserts: no MERGE, no join that shuffles
    the table). A row that carries an id named by an erasure request is
    deleted (spec §7), and so is an event held for a loaded_at in the
    future once a run's range reaches it, since that run reads it as valid.
-#}
{{
    config(
        materialized='action_merge',
        schema=visitor_lookup_schema(),
        unique_key='quarantine_key',
        tags=['visitor_lookup_incremental'],
    )
}}

-- depends_on: {{ ref('visitor_lookup', 'base_erased_events_this_run') }}
-- depends_on: {{ ref('visitor_lookup', 'base_new_event_limits') }}

{%- set upper_limit = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')).upper_limit %}
{%- set earliest_held = visitor_lookup_start_facts()['earliest_held'] if execute else none %}
{#- Nothing read, no held event the range now reaches, nothing to erase: no statement. -#}
{{ action_merge_nothing_to_merge(
    visitor_lookup_is_incremental() and visitor_lookup_window_holds('read') == 0
    and (earliest_held is none or earliest_held > upper_limit)
    and visitor_lookup_erasure_rows(ref('visitor_lookup', 'base_erased_events_this_run'), ['quarantined']) == 0
) }}

with invalid_events as (
    select
        event_id,
        received_visitor_cookie_id,
        received_user_id,
        landed,
        loaded_at,
        invalid_reason
    from {{ ref('visitor_lookup', 'base_events_this_run') }}
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
),

stored_keys as (
    select quarantine_key
    from {{ visitor_lookup_this_or_empty({'quarantine_key': 'string'}) }}
),

new_events as (
    select
        distinct_events.quarantine_key,
        distinct_events.event_id,
        distinct_events.received_visitor_cookie_id,
        distinct_events.received_user_id,
        distinct_events.landed,
        distinct_events.loaded_at,
        distinct_events.invalid_reason
    from distinct_events
    left anti join stored_keys
        on distinct_events.quarantine_key = stored_keys.quarantine_key
    where distinct_events.copy_rank = 1
),

{%- if visitor_lookup_is_incremental() %}

deleted_keys as (
    -- named by an erasure request
    select quarantine_key
    from {{ ref('visitor_lookup', 'base_erased_events_this_run') }}
    where kind = 'quarantined'
    union
    -- held for a loaded_at in the future that this run's range has now reached: the window read
    -- them as any other event
    select stored_events.quarantine_key
    from {{ this }} as stored_events
    inner join {{ ref('visitor_lookup', 'base_new_event_limits') }} as window_limits
        on stored_events.loaded_at <= window_limits.upper_limit
    where stored_events.invalid_reason like 'loaded_at is more than % minutes in the future'
),
{%- endif %}

changes as (
    select
        quarantine_key,
        event_id,
        received_visitor_cookie_id as visitor_cookie_id,
        received_user_id as user_id,
        landed,
        loaded_at,
        invalid_reason,
        'insert' as merge_action
    from new_events
    {%- if visitor_lookup_is_incremental() %}
    union all
    select
        quarantine_key,
        null as event_id,
        null as visitor_cookie_id,
        null as user_id,
        null as landed,
        null as loaded_at,
        null as invalid_reason,
        'delete' as merge_action
    from deleted_keys
    {%- endif %}
)

select
    merge_action,
    quarantine_key,
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    invalid_reason,
    current_timestamp() as first_quarantined_at
from changes
