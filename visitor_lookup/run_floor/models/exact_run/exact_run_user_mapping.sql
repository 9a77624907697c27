-- When each user first appeared on each cookie. A later run reads the stored rows of the cookies its new
-- events with a user name, with the run's pairs broadcast, and appends one row per pair: one read and
-- one write of the table, less than an exact run, which also closes the spans a new user ends.
{{
    config(
        materialized='incremental',
        file_format=var('run_floor__file_format'),
        incremental_strategy='append',
    )
}}

{#- the run's events: on the first run, every stored event -#}
{%- set run_events_after = exact_run_loaded_after() %}

with run_events as (
    select
        visitor_cookie_id,
        user_id,
        landed
    from {{ ref('exact_run_events') }}
    where
        user_id is not null
        and loaded_at > timestamp '{{ run_events_after }}'
),

run_user_starts as (
    select
        visitor_cookie_id,
        user_id,
        min(landed) as valid_start_date
    from run_events
    group by visitor_cookie_id, user_id
),

stored_user_starts as (
    select /*+ broadcast(run_user_starts) */
        stored_rows.visitor_cookie_id,
        stored_rows.user_id,
        stored_rows.valid_start_date
    from {{ exact_run_this_or_empty({
        'visitor_cookie_id': 'string',
        'user_id': 'string',
        'valid_start_date': 'timestamp',
    }) }} as stored_rows
    left semi join run_user_starts
        on stored_rows.visitor_cookie_id = run_user_starts.visitor_cookie_id
),

earliest_user_starts as (
    select
        run_user_starts.visitor_cookie_id,
        run_user_starts.user_id,
        least(run_user_starts.valid_start_date, stored_user_starts.valid_start_date) as valid_start_date
    from run_user_starts
    left join stored_user_starts
        on
            run_user_starts.visitor_cookie_id = stored_user_starts.visitor_cookie_id
            and run_user_starts.user_id = stored_user_starts.user_id
)

select
    visitor_cookie_id,
    user_id,
    valid_start_date
from earliest_user_starts
