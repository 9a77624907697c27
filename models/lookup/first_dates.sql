{#-
    One row per cookie: the earliest landed of any of its valid events. A run
    merges the changes base_first_date_changes_this_run computed for the
    cookies it touches.
-#}
{{
    config(
        schema=visitor_lookup_schema(),
        unique_key=['vcid_first_two', 'visitor_cookie_id'],
        partition_by=visitor_lookup_lookup_partition_by(),
        meta={'visitor_lookup_table_properties': 'lookup', 'visitor_lookup_change_set_stored': true},
        tags=['visitor_lookup_incremental'],
    )
}}

{%- set bounds = visitor_lookup_change_bounds(ref('visitor_lookup', 'base_cookie_changes_this_run')) %}

{{ action_merge_nothing_to_merge(visitor_lookup_is_incremental() and bounds.no_cookie_touched) }}

with first_date_changes as (
    select
        merge_action,
        visitor_cookie_id,
        first_date,
        first_day,
        vcid_first_two
    from {{ ref('visitor_lookup', 'base_first_date_changes_this_run') }}
    where merge_action != 'keep'
)

select
    merge_action,
    visitor_cookie_id,
    first_date,
    first_day,
    vcid_first_two
from first_date_changes
