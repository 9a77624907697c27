{% test agrees_with_user_mapping(model, user_mapping, first_dates, processed_events) %}
{#-
    The lookup (model) holds exactly the user_mapping rows of every cookie
    that ever logged in, but that its first row starts at the cookie's first
    date and its current row ends at the watermark; nothing else has a user.
    The test's `where` (the tested scope) applies to every relation it reads.
-#}
with user_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        row_number() over (partition by visitor_cookie_id order by valid_start_date) as row_position
    from {{ get_where_subquery(user_mapping) }}
),

cookie_first_dates as (
    select
        visitor_cookie_id,
        first_date
    from {{ get_where_subquery(first_dates) }}
),

watermark as (
    select max(landed) as processed_through
    from {{ processed_events }}
),

expected_rows as (
    select
        user_rows.visitor_cookie_id,
        user_rows.user_id,
        case
            when user_rows.row_position = 1 then cookie_first_dates.first_date
            else user_rows.valid_start_date
        end as valid_start_date,
        coalesce(user_rows.valid_end_date, watermark.processed_through) as valid_end_date,
        user_rows.is_current
    from user_rows
    inner join cookie_first_dates
        on user_rows.visitor_cookie_id = cookie_first_dates.visitor_cookie_id
    cross join watermark
),

lookup_rows_with_user as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ model }}
    where user_id is not null
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
    from lookup_rows_with_user
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
