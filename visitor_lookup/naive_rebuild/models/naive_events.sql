-- Every valid event once: ids trimmed, blank ids NULL, the copy with the smallest loaded_at.
with source_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from parquet.`{{ env_var('VISITOR_LOOKUP_EVENTS_PATH') }}`
),

normalised_events as (
    select
        event_id,
        nullif(regexp_replace(visitor_cookie_id, '^\\s+|\\s+$', ''), '') as visitor_cookie_id,
        nullif(regexp_replace(user_id, '^\\s+|\\s+$', ''), '') as user_id,
        landed,
        loaded_at
    from source_events
),

valid_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        row_number() over (
            partition by event_id
            order by loaded_at, landed, visitor_cookie_id, coalesce(user_id, '')
        ) as copy_rank
    from normalised_events
    where
        event_id is not null
        and visitor_cookie_id is not null
        and landed is not null
        and loaded_at is not null
        and landed <= loaded_at + interval 10 minutes
)

select
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at
from valid_events
where copy_rank = 1
