{#-
    Each touched cookie's user history after this run (spec §4), and what
    the merge of user_mapping does with each row: a row starts at every
    instant whose user differs from the previous instant's.

    A run rebuilds each cookie whose user history may change from the
    earliest instant its new events (or a replaced copy) can change: it
    starts from the stored row in effect just before that instant, re-reads
    the cookie's stored events with a user from that instant on, and marks
    the rows that differ from the table (inserts, updates) and the stored
    rows that no longer exist (deletes). Every other stored row of a touched
    cookie says 'keep': the spans read every touched cookie's rows here, not
    in the table. A full build reads every stored event with a user, without
    joining them with the run's changes (which then hold every cookie).
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
    )
}}

{%- set changes_relation = ref('visitor_lookup', 'base_cookie_changes_this_run') -%}
{%- set bounds = visitor_lookup_change_bounds(changes_relation) %}

with changes as (
    -- every touched cookie: one whose user history does not change keeps its rows
    select
        visitor_cookie_id,
        user_changed_from
    from {{ changes_relation }}
    -- false when the run touches no cookie: Spark then plans nothing at all
    where {{ bounds.touched }}
),

stored_rows as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from {{ ref('visitor_lookup', 'base_stored_lookup_rows_this_run') }}
    where lookup_table = 'user_mapping'
),

stored_events_with_user as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed
    from {{ ref('visitor_lookup', 'processed_events') }}
    where user_id is not null and landed >= {{ bounds.user_changed_from }}
),

touched_rows as (
    -- each stored row of the touched cookies with the start of its cookie's row in effect just
    -- before the change (NULL when its user history does not change)
    select
        stored_rows.visitor_cookie_id,
        stored_rows.user_id,
        stored_rows.valid_start_date,
        stored_rows.valid_end_date,
        stored_rows.is_current,
        changes.user_changed_from,
        max(case when stored_rows.valid_start_date < changes.user_changed_from then stored_rows.valid_start_date end)
            over (partition by stored_rows.visitor_cookie_id)
            as start_in_effect_before_change
    from stored_rows
    inner join changes
        on stored_rows.visitor_cookie_id = changes.visitor_cookie_id
),

row_in_effect_before_change as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date
    from touched_rows
    where valid_start_date = start_in_effect_before_change
),

rows_in_scope as (
    -- every stored row the rebuild may replace: from the row in effect before the change on
    -- (none of a cookie whose user history does not change)
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from touched_rows
    where valid_start_date >= coalesce(start_in_effect_before_change, user_changed_from)
),

rows_before_scope as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current
    from touched_rows
    where user_changed_from is null or valid_start_date < coalesce(start_in_effect_before_change, user_changed_from)
),

events_since_change as (
    select
        stored_events_with_user.event_id,
        stored_events_with_user.visitor_cookie_id,
        stored_events_with_user.user_id,
        stored_events_with_user.landed
    from stored_events_with_user
    {% if visitor_lookup_is_incremental('user_mapping') -%}
    inner join changes
        on stored_events_with_user.visitor_cookie_id = changes.visitor_cookie_id
    where stored_events_with_user.landed >= changes.user_changed_from
    {%- endif %}
),

timeline as (
    -- the row in effect before the change, then the events since, which all come later
    select
        visitor_cookie_id,
        valid_start_date as instant,
        user_id,
        cast(null as string) as event_id
    from row_in_effect_before_change
    union all
    select
        visitor_cookie_id,
        landed as instant,
        user_id,
        event_id
    from events_since_change
),

timeline_with_previous_instant as (
    -- one sort of each cookie's timeline serves every window below (a
    -- grouping by instant first shuffled and sorted the events twice more)
    select
        visitor_cookie_id,
        instant,
        user_id,
        lag(instant) over (partition by visitor_cookie_id order by instant asc, event_id desc) as previous_instant
    from timeline
),

user_per_instant as (
    -- several events at one instant: the greatest event_id names the user
    select
        visitor_cookie_id,
        instant,
        user_id
    from timeline_with_previous_instant
    where previous_instant is null or previous_instant != instant
),

timeline_with_previous_user as (
    select
        visitor_cookie_id,
        instant,
        user_id,
        lag(user_id) over (partition by visitor_cookie_id order by instant) as previous_user_id
    from user_per_instant
),

user_switches as (
    select
        visitor_cookie_id,
        instant,
        user_id
    from timeline_with_previous_user
    where previous_user_id is null or previous_user_id != user_id
),

rebuilt_rows as (
    select
        visitor_cookie_id,
        user_id,
        instant as valid_start_date,
        lead(instant) over (partition by visitor_cookie_id order by instant)
        - interval 1 microsecond as valid_end_date,
        lead(instant) over (partition by visitor_cookie_id order by instant) is null as is_current
    from user_switches
),

rows_in_scope_changed_or_kept as (
    {{ action_merge_changes(
        'rebuilt_rows', 'rows_in_scope',
        ['visitor_cookie_id', 'valid_start_date'], ['user_id', 'valid_end_date', 'is_current'],
        keep_unchanged=true,
    ) }}
),

row_changes as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        merge_action
    from rows_in_scope_changed_or_kept
    union all
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        'keep' as merge_action
    from rows_before_scope
),

keyed_changes as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two,
        merge_action
    from row_changes
)

select
    merge_action,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current,
    vcid_first_two
from keyed_changes
