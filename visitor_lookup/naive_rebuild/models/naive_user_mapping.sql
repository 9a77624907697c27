-- A row at every instant whose user differs from the previous instant's; at one instant the greatest event_id wins.
with user_per_instant as (
    select
        visitor_cookie_id,
        landed,
        max_by(user_id, event_id) as user_id
    from {{ ref('naive_events') }}
    where user_id is not null
    group by visitor_cookie_id, landed
),

with_previous_user as (
    select
        visitor_cookie_id,
        landed,
        user_id,
        lag(user_id) over (partition by visitor_cookie_id order by landed) as previous_user_id
    from user_per_instant
),

user_switches as (
    select
        visitor_cookie_id,
        user_id,
        landed as valid_start_date
    from with_previous_user
    where previous_user_id is null or previous_user_id != user_id
)

select
    visitor_cookie_id,
    user_id,
    valid_start_date,
    lead(valid_start_date) over (partition by visitor_cookie_id order by valid_start_date)
    - interval 1 microsecond as valid_end_date,
    lead(valid_start_date) over (partition by visitor_cookie_id order by valid_start_date) is null as is_current,
    substring(visitor_cookie_id, 1, {{ var("visitor_lookup__partition_prefix_length", 2) }}) as vcid_first_two
from user_switches
