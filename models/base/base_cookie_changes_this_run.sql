{#-
    The cookies whose history this run may change, and from which instant.
    A cookie is touched by every event of this run's range (already stored
    or not: re-reading a range repairs a run that failed half-way) and by a
    stored copy that a copy loaded earlier has replaced (its cookie lost an
    event).
-#}
{{ config(materialized='table') }}


with new_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed
    from {{ ref('base_new_events_this_run') }}
),

replacing_events as (
    select
        event_id,
        replaced_visitor_cookie_id,
        replaced_landed
    from {{ ref('base_processed_events') }}
    where replaced_visitor_cookie_id is not null
),

replaced_copies as (
    select
        replacing_events.replaced_visitor_cookie_id as visitor_cookie_id,
        replacing_events.replaced_landed as landed
    from replacing_events
    inner join new_events
        on replacing_events.event_id = new_events.event_id
),

touches as (
    select
        visitor_cookie_id,
        landed,
        user_id is not null as with_user,
        false as removes_event
    from new_events
    union all
    select
        visitor_cookie_id,
        landed,
        true as with_user,
        true as removes_event
    from replaced_copies
)

select
    visitor_cookie_id,
    {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two,
    min(case when not removes_event then landed end) as earliest_new_landed,
    min(case when removes_event then landed end) as earliest_removed_landed,
    min(case when with_user then landed end) as user_changed_from
from touches
group by visitor_cookie_id
