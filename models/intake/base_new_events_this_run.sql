{#-
    The valid events of this run's range, one copy per event_id, for
    processed_events to compare with what it holds. A view: its one reader
    filters it once, and a full build does not write every event twice.
-#}
{{ config(materialized='stable_view', schema=visitor_lookup_schema()) }}

with events_this_run as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        vcid_first_two,
        invalid_reason,
        copy_rank
    from {{ ref('visitor_lookup', 'base_events_this_run') }}
)

select
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    vcid_first_two
from events_this_run
where invalid_reason is null and copy_rank = 1
