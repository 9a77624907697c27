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

missing_from_lookup as (
    select * from expected_rows
    except
    select * from lookup_rows_with_user
),

unexpected_in_lookup as (
    select * from lookup_rows_with_user
    except
    select * from expected_rows
)

select
    'missing from visitor_lookup' as problem,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current
from missing_from_lookup
union all
select
    'unexpected in visitor_lookup' as problem,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current
from unexpected_in_lookup
{% endtest %}
