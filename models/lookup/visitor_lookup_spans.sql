{#-
    The rows of visitor_lookup as stored: for a cookie that never logged in,
    one anonymous span from its first date; otherwise its user_mapping rows,
    the first one starting at the cookie's first date (the anonymous history
    before the first login belongs to the first user). The current span is
    stored open (valid_end_date NULL): the view visitor_lookup closes it at
    the processed-through watermark, so a run rewrites only touched cookies
    instead of every current row. A run reads the touched cookies' first
    dates and user rows after its merges where the run computed them (the
    per-run changes of first_dates and user_mapping, kept rows included),
    not in the two tables; a full build rebuilds every cookie from the two
    tables.
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

{%- set bounds = visitor_lookup_change_bounds(ref('visitor_lookup', 'base_cookie_changes_this_run')) -%}
{#- Each set here, outside the branches, so that dbt sees every dependency when it parses. -#}
{%- set first_date_changes = ref('visitor_lookup', 'base_first_date_changes_this_run') -%}
{%- set user_mapping_changes = ref('visitor_lookup', 'base_user_mapping_changes_this_run') -%}
{%- set first_dates = ref('visitor_lookup', 'first_dates') -%}
{%- set user_mapping = ref('visitor_lookup', 'user_mapping') %}

{{ action_merge_nothing_to_merge(visitor_lookup_is_incremental() and bounds.no_cookie_touched) }}

with cookie_first_dates as (
    -- a run's touched cookies after its merges, as the run computed them; a full build's every cookie
    {% if visitor_lookup_is_incremental() -%}
    select
        visitor_cookie_id,
        first_date
    from {{ first_date_changes }}
    where merge_action != 'delete'
    {%- else -%}
    select
        visitor_cookie_id,
        first_date
    from {{ first_dates }}
    {%- endif %}
),

user_rows as (
    {% if visitor_lookup_is_incremental() -%}
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ user_mapping_changes }}
    where merge_action != 'delete'
    {%- else -%}
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ user_mapping }}
    {%- endif %}
),

cookie_user_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        row_number() over (partition by visitor_cookie_id order by valid_start_date) as row_position
    from user_rows
),

stored_spans as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ ref('visitor_lookup', 'base_stored_lookup_rows_this_run') }}
    where lookup_table = 'visitor_lookup_spans'
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
