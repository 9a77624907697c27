{#- How the lookup relates to first_dates: every cookie is there, from its first date. -#}

{% test covers_first_dates(model, first_dates) %}
{#-
    Every cookie of first_dates has exactly one current row here and its
    earliest row starts at the cookie's first_date; this model has no other
    cookie. One query, where a test per property read the lookup twice.
-#}
with lookup_cookies as (
    select
        visitor_cookie_id,
        count_if(is_current) as current_rows,
        min(valid_start_date) as first_start
    from {{ model }}
    group by visitor_cookie_id
),

cookie_first_dates as (
    -- the test's `where` (the tested scope) applies to both sides
    select
        visitor_cookie_id,
        first_date
    from {{ get_where_subquery(first_dates) }}
),

compared_cookies as (
    select
        coalesce(lookup_cookies.visitor_cookie_id, cookie_first_dates.visitor_cookie_id) as visitor_cookie_id,
        lookup_cookies.current_rows,
        lookup_cookies.first_start,
        cookie_first_dates.first_date,
        case
            when cookie_first_dates.visitor_cookie_id is null then 'not in first_dates'
            when lookup_cookies.visitor_cookie_id is null then 'missing from the lookup'
            when lookup_cookies.current_rows != 1 then 'not one current row'
            when lookup_cookies.first_start is distinct from cookie_first_dates.first_date
                then 'first row not at first_date'
        end as problem
    from lookup_cookies
    full outer join cookie_first_dates
        on lookup_cookies.visitor_cookie_id = cookie_first_dates.visitor_cookie_id
)

select
    visitor_cookie_id,
    current_rows,
    first_start,
    first_date,
    problem
from compared_cookies
where problem is not null
{% endtest %}
