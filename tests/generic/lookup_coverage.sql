{#- How the lookup relates to first_dates: every cookie is there, from its first date. -#}

{% test one_current_row_per_cookie_of(model, cookies) %}
{# Every cookie of `cookies` has exactly one current row here, and this model has no other cookie. #}
with current_rows as (
    select
        visitor_cookie_id,
        count_if(is_current) as current_rows
    from {{ model }}
    group by visitor_cookie_id
),

expected_cookies as (
    -- the test's `where` (the tested scope) applies to both sides
    select visitor_cookie_id
    from {{ get_where_subquery(cookies) }}
)

select
    coalesce(current_rows.visitor_cookie_id, expected_cookies.visitor_cookie_id) as visitor_cookie_id,
    current_rows.current_rows
from current_rows
full outer join expected_cookies
    on current_rows.visitor_cookie_id = expected_cookies.visitor_cookie_id
where current_rows.current_rows is distinct from 1 or expected_cookies.visitor_cookie_id is null
{% endtest %}


{% test first_row_starts_at_first_date(model, first_dates) %}
{# The earliest row of each cookie starts at the cookie's first_date. #}
with first_rows as (
    select
        visitor_cookie_id,
        min(valid_start_date) as first_start
    from {{ model }}
    group by visitor_cookie_id
)

select
    first_rows.visitor_cookie_id,
    first_rows.first_start,
    cookie_first_dates.first_date
from first_rows
left join {{ first_dates }} as cookie_first_dates
    on first_rows.visitor_cookie_id = cookie_first_dates.visitor_cookie_id
where first_rows.first_start is distinct from cookie_first_dates.first_date
{% endtest %}
