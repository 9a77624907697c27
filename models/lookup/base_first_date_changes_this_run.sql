{#-
    Each touched cookie's first date after this run, and what the merge of
    first_dates does with it: the earliest landed of any of its valid
    events. The first date moves earlier when an earlier event arrives; it
    is recounted from the stored events only when a replaced copy may have
    held it, and the row is deleted when the cookie has no event left. A row
    the run leaves as it is says 'keep': the spans read every touched
    cookie's first date here, not in the table.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
    )
}}

{%- set changes_relation = ref('visitor_lookup', 'base_cookie_changes_this_run') -%}
{%- set bounds = visitor_lookup_change_bounds(changes_relation) %}

with changes as (
    select
        visitor_cookie_id,
        vcid_first_two,
        earliest_new_landed,
        earliest_removed_landed
    from {{ changes_relation }}
    -- false when the run touches no cookie: Spark then plans nothing at all
    where {{ bounds.touched }}
),

stored_first_dates as (
    select
        visitor_cookie_id,
        first_date
    from {{ ref('visitor_lookup', 'base_stored_lookup_rows_this_run') }}
    where lookup_table = 'first_dates'
),

stored_events as (
    select
        visitor_cookie_id,
        landed
    from {{ ref('visitor_lookup', 'processed_events') }}
    where {{ bounds.earliest_removed_landed }} is not null
),

candidates as (
    select
        changes.visitor_cookie_id,
        changes.vcid_first_two,
        stored_first_dates.first_date as stored_first_date,
        least(stored_first_dates.first_date, changes.earliest_new_landed) as moved_first_date,
        coalesce(changes.earliest_removed_landed <= stored_first_dates.first_date, false) as needs_recount
    from changes
    left join stored_first_dates
        on changes.visitor_cookie_id = stored_first_dates.visitor_cookie_id
),

recounted_first_dates as (
    select
        stored_events.visitor_cookie_id,
        min(stored_events.landed) as first_date
    from stored_events
    inner join candidates
        on stored_events.visitor_cookie_id = candidates.visitor_cookie_id
    where candidates.needs_recount
    group by stored_events.visitor_cookie_id
),

resolved_first_dates as (
    select
        candidates.visitor_cookie_id,
        candidates.vcid_first_two,
        candidates.stored_first_date,
        case
            when candidates.needs_recount then recounted_first_dates.first_date
            else candidates.moved_first_date
        end as first_date
    from candidates
    left join recounted_first_dates
        on candidates.visitor_cookie_id = recounted_first_dates.visitor_cookie_id
),

first_date_changes as (
    -- a cookie with neither a stored nor a new first date has no row anywhere
    select
        visitor_cookie_id,
        first_date,
        vcid_first_two,
        case
            when first_date is null then 'delete'
            when stored_first_date is null then 'insert'
            when first_date != stored_first_date then 'update'
            else 'keep'
        end as merge_action
    from resolved_first_dates
    where first_date is not null or stored_first_date is not null
)

select
    merge_action,
    visitor_cookie_id,
    first_date,
    {{ visitor_lookup_utc_date('first_date') }} as first_day,
    vcid_first_two
from first_date_changes
