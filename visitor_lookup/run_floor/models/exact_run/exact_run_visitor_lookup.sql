-- Who stood behind each cookie from when, after first_dates and user_mapping. A later run reads the rows
-- of user_mapping and of this table for the cookies its new events name, with those cookies broadcast,
-- and appends one row per cookie and user: two reads and one write, less than an exact run, which also
-- replaces the rows it supersedes.
{{
    config(
        materialized='incremental',
        file_format=var('run_floor__file_format'),
        incremental_strategy='append',
    )
}}

{#- the run's events: on the first run, every stored event -#}
{%- set run_events_after = exact_run_loaded_after() %}

-- depends_on: {{ ref('exact_run_first_dates') }}

with run_events as (
    select
        visitor_cookie_id,
        landed
    from {{ ref('exact_run_events') }}
    where loaded_at > timestamp '{{ run_events_after }}'
),

run_cookies as (
    select
        visitor_cookie_id,
        min(landed) as first_landed
    from run_events
    group by visitor_cookie_id
),

user_starts as (
    -- a later run's cookies broadcast; on the first run they are every cookie of the history, which the
    -- driver cannot broadcast at 100 M events
    select {{ '/*+ broadcast(run_cookies) */' if is_incremental() }}
        user_mapping.visitor_cookie_id,
        user_mapping.user_id,
        user_mapping.valid_start_date
    from {{ ref('exact_run_user_mapping') }} as user_mapping
    left semi join run_cookies
        on user_mapping.visitor_cookie_id = run_cookies.visitor_cookie_id
),

run_spans as (
    select
        run_cookies.visitor_cookie_id,
        user_starts.user_id,
        coalesce(user_starts.valid_start_date, run_cookies.first_landed) as valid_start_date
    from run_cookies
    left join user_starts
        on run_cookies.visitor_cookie_id = user_starts.visitor_cookie_id
),

stored_spans as (
    select /*+ broadcast(run_cookies) */
        stored_rows.visitor_cookie_id,
        stored_rows.user_id,
        stored_rows.valid_start_date
    from {{ exact_run_this_or_empty({
        'visitor_cookie_id': 'string',
        'user_id': 'string',
        'valid_start_date': 'timestamp',
    }) }} as stored_rows
    left semi join run_cookies
        on stored_rows.visitor_cookie_id = run_cookies.visitor_cookie_id
),

earliest_spans as (
    select
        run_spans.visitor_cookie_id,
        run_spans.user_id,
        least(run_spans.valid_start_date, stored_spans.valid_start_date) as valid_start_date
    from run_spans
    left join stored_spans
        on
            run_spans.visitor_cookie_id = stored_spans.visitor_cookie_id
            and run_spans.user_id <=> stored_spans.user_id
)

select
    visitor_cookie_id,
    user_id,
    valid_start_date
from earliest_spans
