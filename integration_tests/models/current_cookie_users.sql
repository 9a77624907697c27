-- A model of the host reading the package's lookup: the user behind each
-- cookie now (NULL for a cookie that never logged in).
with lookup as (
    select
        visitor_cookie_id,
        user_id,
        is_current
    from {{ ref('visitor_lookup', 'visitor_lookup') }}
)

select
    visitor_cookie_id,
    user_id
from lookup
where is_current
