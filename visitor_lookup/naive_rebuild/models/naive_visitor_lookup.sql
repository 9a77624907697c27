-- user_mapping from each cookie's first date, anonymous cookies as one row, current rows ending at the watermark.
with watermark as (
    select max(landed) as processed_through
    from {{ ref('naive_events') }}
),

numbered_user_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        row_number() over (partition by visitor_cookie_id order by valid_start_date) as row_position
    from {{ ref('naive_user_mapping') }}
),

lookup_rows as (
    select
        first_dates.visitor_cookie_id,
        user_rows.user_id,
        case
            when user_rows.row_position > 1 then user_rows.valid_start_date else first_dates.first_date
        end as valid_start_date,
        user_rows.valid_end_date,
        coalesce(user_rows.is_current, true) as is_current
    from {{ ref('naive_first_dates') }} as first_dates
    left join numbered_user_rows as user_rows
        on first_dates.visitor_cookie_id = user_rows.visitor_cookie_id
)

select
    lookup_rows.visitor_cookie_id,
    lookup_rows.user_id,
    lookup_rows.valid_start_date,
    coalesce(lookup_rows.valid_end_date, watermark.processed_through) as valid_end_date,
    lookup_rows.is_current,
    to_date(lookup_rows.valid_start_date) as start_day,
    substring(
        lookup_rows.visitor_cookie_id, 1, {{ var("visitor_lookup__partition_prefix_length", 2) }}
    ) as vcid_first_two
from lookup_rows
cross join watermark
