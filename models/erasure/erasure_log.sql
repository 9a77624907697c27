{#-
    One row per erasure request done: when it was asked and done, by which
    run, and how many stored events and quarantined rows it erased. Written
    after processed_events and the quarantine have deleted them, so a run
    that fails before leaves the request pending and the next run does it.
    Holds no user or cookie id. A record, not a cache: --full-refresh keeps
    it (full_refresh=false), so the rebuild still knows which requests are
    done, when, and by which run.
-#}
{{
    config(
        materialized='action_merge',
        schema=visitor_lookup_schema(),
        unique_key='request_id',
        full_refresh=false,
    )
}}

-- depends_on: {{ ref('visitor_lookup', 'processed_events') }}
-- depends_on: {{ ref('visitor_lookup', 'quarantined_events') }}

{%- set limits = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')) -%}
{%- set erasures_relation = ref('visitor_lookup', 'base_erased_events_this_run') -%}
{%- set requests = visitor_lookup_erasure_rows(erasures_relation, ['request']) %}

{{ action_merge_nothing_to_merge(requests == 0) }}

with erasures as (
    select
        request_id,
        kind,
        event_id,
        quarantine_key,
        requested_at
    from {{ erasures_relation }}
),

requests_done as (
    select
        request_id,
        max(requested_at) as requested_at,
        count(distinct case when kind = 'event' then event_id end) as events_erased,
        count(distinct quarantine_key) as quarantined_erased
    from erasures
    group by request_id
)

select
    'insert' as merge_action,
    request_id,
    requested_at,
    current_timestamp() as erased_at,
    {{ limits.run_number }} as run_number,
    events_erased,
    quarantined_erased
from requests_done
