-- Each cookie's first landed. A later run reads the stored rows of the cookies its new events name, with
-- the run's events broadcast, and appends one row per such cookie: one read and one write of the
-- table, less than an exact run, which also replaces the rows it supersedes.
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
        landed
    from {{ ref('exact_run_events') }}
    where loaded_at > timestamp '{{ run_events_after }}'
),

run_first_dates as (
    select
        visitor_cookie_id,
        min(landed) as first_date
    from run_events
    group by visitor_cookie_id
),

stored_first_dates as (
    select /*+ broadcast(run_first_dates) */
        stored_rows.visitor_cookie_id,
        stored_rows.first_date
    from {{ exact_run_this_or_empty({
        'visitor_cookie_id': 'string',
        'first_date': 'timestamp',
    }) }} as stored_rows
    left semi join run_first_dates
        on stored_rows.visitor_cookie_id = run_first_dates.visitor_cookie_id
),

earliest_first_dates as (
    select
        run_first_dates.visitor_cookie_id,
        least(run_first_dates.first_date, stored_first_dates.first_date) as first_date
    from run_first_dates
    left join stored_first_dates
        on run_first_dates.visitor_cookie_id = stored_first_dates.visitor_cookie_id
)

select
    visitor_cookie_id,
    first_date
from earliest_first_dates
