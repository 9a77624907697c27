{% test agrees_with_first_dates_and_user_mapping(model, first_dates, user_mapping, processed_events) %}
{#-
    The lookup (model) holds exactly the rows its definition gives (spec §4):
    for every cookie of first_dates, its user_mapping rows, the first one
    starting at the cookie's first date, or one row without a user from that
    date when it never logged in; its current row ends at the watermark.
    Nothing else: so every cookie has its rows and one current row, and the
    first starts at its first date. The test's `where` (the tested scope)
    applies to every relation it reads.
-#}
with cookie_first_dates as (
    select
        visitor_cookie_id,
        first_date
    from {{ get_where_subquery(first_dates) }}
),

user_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        row_number() over (partition by visitor_cookie_id order by valid_start_date) as row_position
    from {{ get_where_subquery(user_mapping) }}
),

watermark as (
    select max(landed) as processed_through
    from {{ processed_events }}
),

expected_rows as (
    select
        cookie_first_dates.visitor_cookie_id,
        user_rows.user_id,
        case
            when user_rows.row_position > 1 then user_rows.valid_start_date
            else cookie_first_dates.first_date
        end as valid_start_date,
        coalesce(user_rows.valid_end_date, watermark.processed_through) as valid_end_date,
        coalesce(user_rows.is_current, true) as is_current
    from cookie_first_dates
    left join user_rows
        on cookie_first_dates.visitor_cookie_id = user_rows.visitor_cookie_id
    cross join watermark
),

lookup_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ model }}
),

-- every row of both sides with the side it is on, then each distinct row once: one read of each table,
-- where a set difference each way read each twice
rows_of_both_sides as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        true as expected,
        false as in_lookup
    from expected_rows
    union all
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        false as expected,
        true as in_lookup
    from lookup_rows
),

compared_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        bool_or(expected) as expected,
        bool_or(in_lookup) as in_lookup
    from rows_of_both_sides
    group by visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current
)

select
    case when expected then 'missing from visitor_lookup' else 'unexpected in visitor_lookup' end as problem,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current
from compared_rows
where expected != in_lookup
{% endtest %}
