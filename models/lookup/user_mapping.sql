{#-
    Type-2 history of the user behind each cookie (spec §4). A run merges
    the changes base_user_mapping_changes_this_run computed for the cookies
    whose user history it may change.
-#}
{{
    config(
        schema=visitor_lookup_schema(),
        unique_key=['vcid_first_two', 'visitor_cookie_id', 'valid_start_date'],
        partition_by=visitor_lookup_lookup_partition_by(),
        meta={'visitor_lookup_table_properties': 'lookup', 'visitor_lookup_change_set_stored': true},
        tags=['visitor_lookup_incremental'],
    )
}}

{%- set bounds = visitor_lookup_change_bounds(ref('visitor_lookup', 'base_cookie_changes_this_run')) %}

{{ action_merge_nothing_to_merge(visitor_lookup_is_incremental() and bounds.no_user_changed) }}

with row_changes as (
    select
        merge_action,
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        vcid_first_two
    from {{ ref('visitor_lookup', 'base_user_mapping_changes_this_run') }}
    where merge_action != 'keep'
)

select
    merge_action,
    visitor_cookie_id,
    user_id,
    valid_start_date,
    valid_end_date,
    is_current,
    vcid_first_two
from row_changes
