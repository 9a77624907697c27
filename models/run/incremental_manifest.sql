{#-
    One row per model of the incremental set: the loaded_at it has processed
    through, and the number of its latest successful run. Created empty here; only the on-run-end hook
    (visitor_lookup_update_manifest) writes rows, so an incremental run of
    this model has nothing to merge and touches nothing. --full-refresh empties it,
    which sends the next run back to state 1. The column names are the
    contract's (spec §5), hence the sqlfluff exception for `model`;
    last_run_number is ours (see base_cookie_changes_this_run).
-#}
{{
    config(
        materialized='action_merge',
        schema=visitor_lookup_schema(),
        unique_key='model',
    )
}}

{{ action_merge_nothing_to_merge(visitor_lookup_is_incremental()) }}
select
    'insert' as merge_action,
    cast(null as string) as model,  -- noqa: RF04
    cast(null as timestamp) as last_success,
    cast(null as bigint) as last_run_number
where false
