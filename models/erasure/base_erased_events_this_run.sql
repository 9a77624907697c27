{#-
    What this run erases (spec §7): one row per pending erasure request
    (kind 'request'), per stored event that carries a requested id ('event',
    its cookie and landed), per earlier cookie such an event or another
    stored event remembers as replaced ('replaced'), and per quarantined row
    that carries one ('quarantined'). Pending: not in erasure_log yet. Reads
    nothing when no request is pending. processed_events and the quarantine
    are read through the graph, not ref(): they are built after this model
    and delete what it lists.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
        post_hook="{{ visitor_lookup_log_erasure(this) }}",
    )
}}

{%- set counts = visitor_lookup_erasure_request_counts() -%}
{%- set requests_relation = source('visitor_lookup_erasure', 'erasure_requests') -%}
{%- set log_relation = visitor_lookup_existing(visitor_lookup_model_relation('erasure_log')) -%}
{%- set processed_relation = visitor_lookup_existing(visitor_lookup_model_relation('processed_events')) -%}
{%- set quarantine_relation = visitor_lookup_existing(visitor_lookup_model_relation('quarantined_events')) -%}
{%- set any_pending = counts.pending > 0 %}

{{ visitor_lookup_no_erasure_pending(not any_pending, counts.requests) }}

with requests as (
    select
        request_id,
        user_id,
        visitor_cookie_id,
        requested_at
    from {{ requests_relation if any_pending else visitor_lookup_empty_relation({
        'request_id': 'string',
        'user_id': 'string',
        'visitor_cookie_id': 'string',
        'requested_at': 'timestamp',
    }) }}
),

pending_requests as (
    select
        request_id,
        {{ visitor_lookup_normalise_id('user_id') }} as user_id,
        {{ visitor_lookup_normalise_id('visitor_cookie_id') }} as visitor_cookie_id,
        requested_at
    from requests
    {%- if log_relation is not none %}
    where request_id not in (select done.request_id from {{ log_relation }} as done)
    {%- endif %}
),

stored_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        replaced_visitor_cookie_id,
        replaced_landed
    from {{ processed_relation if processed_relation is not none and any_pending else visitor_lookup_empty_relation({
        'event_id': 'string',
        'visitor_cookie_id': 'string',
        'user_id': 'string',
        'landed': 'timestamp',
        'replaced_visitor_cookie_id': 'string',
        'replaced_landed': 'timestamp',
    }) }}
),

quarantined_rows as (
    select
        quarantine_key,
        {{ visitor_lookup_normalise_id('visitor_cookie_id') }} as visitor_cookie_id,
        {{ visitor_lookup_normalise_id('user_id') }} as user_id
    from {{ quarantine_relation if quarantine_relation is not none and any_pending else visitor_lookup_empty_relation({
        'quarantine_key': 'string',
        'visitor_cookie_id': 'string',
        'user_id': 'string',
    }) }}
),

erased_events as (
    select /*+ broadcast(pending_requests) */
        pending_requests.request_id,
        stored_events.event_id,
        stored_events.visitor_cookie_id,
        stored_events.user_id,
        stored_events.landed,
        stored_events.replaced_visitor_cookie_id,
        stored_events.replaced_landed
    from stored_events
    inner join pending_requests
        on
            stored_events.user_id = pending_requests.user_id
            or stored_events.visitor_cookie_id = pending_requests.visitor_cookie_id
),

remembered_cookies as (
    -- the cookie an erased event's replaced copy stood on may still wait for its recount (a run failed
    -- half-way); and stored events that remember a requested cookie as the one a replaced copy stood on
    select
        request_id,
        event_id,
        replaced_visitor_cookie_id,
        replaced_landed
    from erased_events
    where replaced_visitor_cookie_id is not null
    union all
    select /*+ broadcast(pending_requests) */
        pending_requests.request_id,
        stored_events.event_id,
        stored_events.replaced_visitor_cookie_id,
        stored_events.replaced_landed
    from stored_events
    inner join pending_requests
        on stored_events.replaced_visitor_cookie_id = pending_requests.visitor_cookie_id
),

erased_quarantined_rows as (
    select /*+ broadcast(pending_requests) */
        pending_requests.request_id,
        quarantined_rows.quarantine_key
    from quarantined_rows
    inner join pending_requests
        on
            quarantined_rows.user_id = pending_requests.user_id
            or quarantined_rows.visitor_cookie_id = pending_requests.visitor_cookie_id
),

erasures as (
    select
        request_id,
        'request' as kind,
        cast(null as string) as event_id,
        cast(null as string) as quarantine_key,
        cast(null as string) as visitor_cookie_id,
        cast(null as timestamp) as landed,
        cast(null as boolean) as with_user,
        requested_at
    from pending_requests
    union all
    select
        request_id,
        'event' as kind,
        event_id,
        null as quarantine_key,
        visitor_cookie_id,
        landed,
        user_id is not null as with_user,
        null as requested_at
    from erased_events
    union all
    select
        request_id,
        'replaced' as kind,
        event_id,
        null as quarantine_key,
        replaced_visitor_cookie_id as visitor_cookie_id,
        replaced_landed as landed,
        true as with_user,
        null as requested_at
    from remembered_cookies
    union all
    select
        request_id,
        'quarantined' as kind,
        null as event_id,
        quarantine_key,
        null as visitor_cookie_id,
        null as landed,
        null as with_user,
        null as requested_at
    from erased_quarantined_rows
)

select
    request_id,
    kind,
    event_id,
    quarantine_key,
    visitor_cookie_id,
    landed,
    with_user,
    requested_at
from erasures
