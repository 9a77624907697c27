{#-
    The stored rows of the cookies this run touches, in the three lookup
    tables, read before any of them is merged: the models that compute the
    run's changes read these instead of the tables, so a run reads each
    lookup table once and merges it once. A table not built yet (or rebuilt
    by --full-refresh) gives no row.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
    )
}}

{%- set changes_relation = ref('visitor_lookup', 'base_cookie_changes_this_run') -%}
{%- set bounds = visitor_lookup_change_bounds(changes_relation) -%}
{%- set row_columns = {
    'visitor_cookie_id': 'string',
    'user_id': 'string',
    'valid_start_date': 'timestamp',
    'valid_end_date': 'timestamp',
    'is_current': 'boolean',
} %}

with touched_cookies as (
    select visitor_cookie_id
    from {{ changes_relation }}
    -- false when the run touches no cookie: Spark then plans nothing at all
    where {{ bounds.touched }}
),

stored_rows as (
    -- a semi join streams each table past the broadcast cookies
    select
        'first_dates' as lookup_table,
        visitor_cookie_id,
        first_date,
        cast(null as string) as user_id,
        cast(null as timestamp) as valid_start_date,
        cast(null as timestamp) as valid_end_date,
        cast(null as boolean) as is_current
    from {{ visitor_lookup_this_or_empty({'visitor_cookie_id': 'string', 'first_date': 'timestamp'}, 'first_dates') }}
    where visitor_cookie_id in (select touched_cookies.visitor_cookie_id from touched_cookies)
    {%- for table in ['user_mapping', 'visitor_lookup_spans'] %}
    union all
    select
        '{{ table }}' as lookup_table,
        visitor_cookie_id,
        cast(null as timestamp) as first_date,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ visitor_lookup_this_or_empty(row_columns, table) }}
    where visitor_cookie_id in (select touched_cookies.visitor_cookie_id from touched_cookies)
    {%- endfor %}
)

select
    lookup_table,
    visitor_cookie_id,
    first_date,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current
from stored_rows
