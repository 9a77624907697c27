{#-
    Every event with loaded_at inside this run's range, normalised, each
    marked with why it is invalid (NULL when valid) and, among valid copies
    of one event_id, its rank (1 = the copy that counts).
-#}
{{
    config(
        materialized='table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
        post_hook="{{ visitor_lookup_log_window(this) }}",
    )
}}

{%- set limits = visitor_lookup_run_limits(ref('base_new_event_limits')) -%}
{%- set max_skew_minutes = visitor_lookup_var_whole_number('visitor_lookup__max_clock_skew_minutes', 0) -%}

with source_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from {{ source('visitor_lookup', 'pageviews') }}
),

events_in_window as (
    -- Events without loaded_at fall in no range: every run reads them, the quarantine keeps them once.
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from source_events
    where
        loaded_at between {{ visitor_lookup_timestamp_literal(limits.lower_limit) }}
        and {{ visitor_lookup_timestamp_literal(limits.upper_limit) }}
        or loaded_at is null
),

normalised_events as (
    select
        cast(event_id as string) as event_id,
        {{ visitor_lookup_normalise_id('visitor_cookie_id') }} as visitor_cookie_id,
        {{ visitor_lookup_normalise_id('user_id') }} as user_id,
        cast(landed as timestamp) as landed,
        cast(loaded_at as timestamp) as loaded_at,
        cast(visitor_cookie_id as string) as received_visitor_cookie_id,
        cast(user_id as string) as received_user_id
    from events_in_window
),

checked_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        received_visitor_cookie_id,
        received_user_id,
        case
            when visitor_cookie_id is null then 'visitor_cookie_id is null or blank'
            when event_id is null then 'event_id is null'
            when landed is null then 'landed is null'
            when loaded_at is null then 'loaded_at is null'
            when landed > loaded_at + interval {{ max_skew_minutes }} minutes
                then 'landed is more than {{ max_skew_minutes }} minutes after loaded_at'
        end as invalid_reason
    from normalised_events
),

ranked_copies as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        received_visitor_cookie_id,
        received_user_id,
        invalid_reason,
        row_number() over (
            partition by event_id, invalid_reason is null
            order by {{ visitor_lookup_copy_precedence() }}
        ) as copy_rank
    from checked_events
)

select
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    received_visitor_cookie_id,
    received_user_id,
    invalid_reason,
    case when invalid_reason is null then copy_rank end as copy_rank,
    {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two
from ranked_copies
