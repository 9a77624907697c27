{#-
    The cookies whose history this run may change, and from which instant:
    those of every stored event that some model of the incremental set has
    not processed yet. That is every row processed_events stored after the
    run every model has succeeded through (confirmed_run_number), this run's
    rows included: new events, and copies loaded earlier that replaced a
    stored one, whose replaced cookie lost an event. Rows stored by a run
    that failed half-way stay above that number until every model has
    succeeded again, so the next runs repair them. Events a run merely reads
    again (lookback, re-delivery) change nothing and touch no cookie.
    The cookies erased events stood on come from erased_cookies, kept until
    every model has recomputed them the same way.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
        post_hook="{% do visitor_lookup_change_bounds(this, built=true) %}",
    )
}}

{%- set limits = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')) %}

with unprocessed_events as (
    select
        visitor_cookie_id,
        user_id,
        landed,
        replaced_visitor_cookie_id,
        replaced_landed
    from {{ ref('visitor_lookup', 'processed_events') }}
    where run_number > {{ limits.confirmed_run_number }}
),

erased_cookies as (
    select
        visitor_cookie_id,
        earliest_landed,
        user_changed_from
    from {{ ref('visitor_lookup', 'erased_cookies') }}
    where run_number > {{ limits.confirmed_run_number }}
),

touches as (
    select
        visitor_cookie_id,
        landed,
        user_id is not null as with_user,
        false as removes_event,
        false as erased
    from unprocessed_events
    union all
    select
        replaced_visitor_cookie_id as visitor_cookie_id,
        replaced_landed as landed,
        true as with_user,
        true as removes_event,
        false as erased
    from unprocessed_events
    where replaced_visitor_cookie_id is not null
    union all
    select
        visitor_cookie_id,
        earliest_landed as landed,
        false as with_user,
        true as removes_event,
        true as erased
    from erased_cookies
    union all
    select
        visitor_cookie_id,
        user_changed_from as landed,
        true as with_user,
        true as removes_event,
        true as erased
    from erased_cookies
    where user_changed_from is not null
)

select
    visitor_cookie_id,
    {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two,
    min(case when not removes_event then landed end) as earliest_new_landed,
    min(case when removes_event then landed end) as earliest_removed_landed,
    min(case when with_user then landed end) as user_changed_from,
    bool_or(erased) as erased
from touches
group by visitor_cookie_id
