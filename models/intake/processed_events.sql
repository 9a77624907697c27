{#-
    Every valid page view processed so far, one row per event_id: the copy
    with the smallest loaded_at. A copy read again (lookback, re-delivery)
    changes nothing; a copy that arrives late but was loaded earlier than the
    stored one replaces it, and the row keeps the replaced copy's cookie and
    landed so the lookup models can recompute what that copy had shaped.
    run_number says which run stored the row (base_cookie_changes_this_run);
    event_key, a 64-bit hash of event_id, lets a run find the files holding
    the stored copies of its events without reading their ids.
    An erased event (spec §7) is deleted, or replaced by its best copy that
    no request names; a row that remembers an erased cookie as replaced
    forgets it. erased_cookies, written first, keeps the cookies to recompute.
-#}
{{
    config(
        materialized='action_merge',
        schema=visitor_lookup_schema(),
        unique_key='event_id',
        tags=['visitor_lookup_incremental'],
    )
}}

-- depends_on: {{ ref('visitor_lookup', 'erased_cookies') }}

{%- set limits = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')) %}
{%- set columns = {
    'event_id': 'string',
    'visitor_cookie_id': 'string',
    'user_id': 'string',
    'landed': 'timestamp',
    'loaded_at': 'timestamp',
    'vcid_first_two': 'string',
} %}
{#- No valid event in the window and nothing to erase: no statement, not even the key pass. -#}
{%- set nothing_new = visitor_lookup_is_incremental() and visitor_lookup_window_holds('valid') == 0
    and visitor_lookup_erasure_rows(ref('visitor_lookup', 'base_erased_events_this_run'), ['event', 'replaced']) == 0 %}
{{ action_merge_nothing_to_merge(nothing_new) }}

{#- The stored rows this run compares with are those of its events' ids and of the erased ones. -#}
{%- set keys_of_run_events -%}
select xxhash64(event_id) from {{ ref('visitor_lookup', 'base_new_events_this_run') }}
union all
select xxhash64(event_id) from {{ ref('visitor_lookup', 'base_erased_events_this_run') }}
where kind in ('event', 'replaced')
{%- endset %}

with new_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two
    from {{ ref('visitor_lookup', 'base_new_events_this_run') }}
),

erasures as (
    select
        kind,
        event_id
    from {{ ref('visitor_lookup', 'base_erased_events_this_run') }}
    where kind in ('event', 'replaced')
),

erased_event_ids as (
    select distinct event_id
    from erasures
    where kind = 'event'
),

stored_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two
    from {{ visitor_lookup_empty_relation(columns) if nothing_new
        else visitor_lookup_stored_rows(columns, 'event_key', keys_of_run_events) }}
),

remaining_stored_events as (
    select
        stored_events.event_id,
        stored_events.visitor_cookie_id,
        stored_events.user_id,
        stored_events.landed,
        stored_events.loaded_at
    from stored_events
    left anti join erased_event_ids
        on stored_events.event_id = erased_event_ids.event_id
),

stored_copies as (
    -- the stored copies of this run's events: the table streams past the
    -- broadcast new events once, and is never shuffled
    select /*+ broadcast(new_events) */
        stored_events.event_id,
        stored_events.visitor_cookie_id,
        stored_events.user_id,
        stored_events.landed,
        stored_events.loaded_at
    from remaining_stored_events as stored_events
    inner join new_events
        on stored_events.event_id = new_events.event_id
),

compared_copies as (
    select
        new_events.event_id,
        new_events.visitor_cookie_id,
        new_events.user_id,
        new_events.landed,
        new_events.loaded_at,
        new_events.vcid_first_two,
        stored_copies.event_id is not null or erased_event_ids.event_id is not null as replaces_stored,
        stored_copies.visitor_cookie_id as stored_visitor_cookie_id,
        stored_copies.landed as stored_landed,
        stored_copies.event_id is null
        or {{ visitor_lookup_copy_precedence('new_events') }}
        < {{ visitor_lookup_copy_precedence('stored_copies') }} as comes_first,
        {{ visitor_lookup_same_event_content('new_events', 'stored_copies') }} is not true as says_otherwise
    from new_events
    left join stored_copies
        on new_events.event_id = stored_copies.event_id
    left join erased_event_ids
        on new_events.event_id = erased_event_ids.event_id
),

events_to_store as (
    -- a stored copy that said something else: remember where it stood
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two,
        case when says_otherwise then stored_visitor_cookie_id end as replaced_visitor_cookie_id,
        case when says_otherwise then stored_landed end as replaced_landed,
        case when replaces_stored then 'update' else 'insert' end as merge_action
    from compared_copies
    where comes_first
),

events_left_without_copy as (
    -- erased, and no copy that no request names was ever loaded
    select erased_event_ids.event_id
    from erased_event_ids
    left anti join new_events
        on erased_event_ids.event_id = new_events.event_id
),

forgotten_replacements as (
    -- rows that remember an erased cookie as a replaced copy's: the same row, without it
    select /*+ broadcast(erasures) */
        stored_events.event_id,
        stored_events.visitor_cookie_id,
        stored_events.user_id,
        stored_events.landed,
        stored_events.loaded_at,
        stored_events.vcid_first_two
    from stored_events
    left semi join erasures
        on stored_events.event_id = erasures.event_id and erasures.kind = 'replaced'
    left anti join erased_event_ids
        on stored_events.event_id = erased_event_ids.event_id
    left anti join new_events
        on stored_events.event_id = new_events.event_id
),

changes as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two,
        replaced_visitor_cookie_id,
        replaced_landed,
        merge_action
    from events_to_store
    union all
    select
        event_id,
        null as visitor_cookie_id,
        null as user_id,
        null as landed,
        null as loaded_at,
        null as vcid_first_two,
        null as replaced_visitor_cookie_id,
        null as replaced_landed,
        'delete' as merge_action
    from events_left_without_copy
    union all
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two,
        null as replaced_visitor_cookie_id,
        null as replaced_landed,
        'update' as merge_action
    from forgotten_replacements
)

select
    merge_action,
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    vcid_first_two,
    replaced_visitor_cookie_id,
    replaced_landed,
    {{ limits.run_number }} as run_number,
    xxhash64(event_id) as event_key
from changes
-- a full build writes its rows in landed order, so that each file holds a
-- stretch of time: a run that recomputes the touched cookies from an instant
-- on reads only the files since then (their statistics skip the others)
{{ '' if visitor_lookup_is_incremental() else 'order by landed' }}
