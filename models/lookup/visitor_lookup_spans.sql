{#-
    The rows of visitor_lookup as stored: for a cookie that never logged in,
    one anonymous span from its first date; otherwise its user_mapping rows,
    the first one starting at the cookie's first date (the anonymous history
    before the first login belongs to the first user). The current span is
    stored open (valid_end_date NULL): the view visitor_lookup closes it at
    the processed-through watermark, so a run rewrites only touched cookies
    instead of every current row. A full build rebuilds every cookie, so it
    reads the two tables without joining them with the run's changes.
-#}
{{
    config(
        schema=visitor_lookup_schema(),
        unique_key=['vcid_first_two', 'visitor_cookie_id', 'valid_start_date'],
        partition_by=visitor_lookup_lookup_partition_by(),
        meta={'visitor_lookup_table_properties': 'lookup'},
        tags=['visitor_lookup_incremental'],
    )
}}

{%- set changes_relation = ref('visitor_lookup', 'base_cookie_changes_this_run') -%}
{%- set bounds = visitor_lookup_change_bounds(changes_relation) %}

{{ action_merge_nothing_to_merge(visitor_lookup_is_incremental() and bounds.no_cookie_touched) }}

with changes as (
    select visitor_cookie_id
    from {{ changes_relation }}
    -- false when the run touches no cookie: Spark then plans nothing at all
    where {{ bounds.touched }}
),

cookie_first_dates as (
    select
        first_dates.visitor_cookie_id,
        first_dates.first_date
    from {{ ref('visitor_lookup', 'first_dates') }} as first_dates
    {% if visitor_lookup_is_incremental() -%}
    inner join changes
        on first_dates.visitor_cookie_id = changes.visitor_cookie_id
    {%- endif %}
),

cookie_user_rows as (
    select
        user_mapping.visitor_cookie_id,
        user_mapping.user_id,
        user_mapping.valid_start_date,
        user_mapping.valid_end_date,
        user_mapping.is_current,
        row_number() over (
            partition by user_mapping.visitor_cookie_id order by user_mapping.valid_start_date
        ) as row_position
    from {{ ref('visitor_lookup', 'user_mapping') }} as user_mapping
    {% if visitor_lookup_is_incremental() -%}
    inner join changes
        on user_mapping.visitor_cookie_id = changes.visitor_cookie_id
    {%- endif %}
),

stored_spans as (
    select
        spans.visitor_cookie_id,
        spans.user_id,
        spans.valid_start_date,
        spans.valid_end_date,
        spans.is_current
    from {{ visitor_lookup_this_or_empty({
        'visitor_cookie_id': 'string',
        'user_id': 'string',
        'valid_start_date': 'timestamp',
        'valid_end_date': 'timestamp',
        'is_current': 'boolean',
    }) }} as spans
    inner join changes
        on spans.visitor_cookie_id = changes.visitor_cookie_id
),

rebuilt_spans as (
    -- a cookie with no user row has one anonymous span from its first date
    select
        cookie_first_dates.visitor_cookie_id,
        cookie_user_rows.user_id,
        case
            when cookie_user_rows.row_position > 1 then cookie_user_rows.valid_start_date
            else cookie_first_dates.first_date
        end as valid_start_date,
        cookie_user_rows.valid_end_date,
        coalesce(cookie_user_rows.is_current, true) as is_current
    from cookie_first_dates
    left join cookie_user_rows
        on cookie_first_dates.visitor_cookie_id = cookie_user_rows.visitor_cookie_id
),

span_changes as (
    {{ action_merge_changes(
        'rebuilt_spans', 'stored_spans',
        ['visitor_cookie_id', 'valid_start_date'], ['user_id', 'valid_end_date', 'is_current']
    ) }}
),

keyed_changes as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        {{ visitor_lookup_utc_date('valid_start_date') }} as start_day,
        {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two,
        merge_action
    from span_changes
)

select
    merge_action,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current,
    start_day,
    vcid_first_two
from keyed_changes
