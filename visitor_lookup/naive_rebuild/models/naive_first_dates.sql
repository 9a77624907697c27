select
    visitor_cookie_id,
    min(landed) as first_date,
    to_date(min(landed)) as first_day,
    substring(visitor_cookie_id, 1, {{ var("visitor_lookup__partition_prefix_length", 2) }}) as vcid_first_two
from {{ ref('naive_events') }}
group by visitor_cookie_id
