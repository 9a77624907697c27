{#-
    One row per model of the incremental set: the loaded_at it has processed
    through. Created empty here; only the on-run-end hook
    (visitor_lookup_update_manifest) writes rows. --full-refresh empties it,
    which sends the next run back to state 1. The column names are the
    contract's (SPEC §5), hence the sqlfluff exception for `model`.
-#}
{{
    config(
        materialized='incremental',
        alias='incremental_manifest',
        incremental_strategy='append',
    )
}}

select
    cast(null as string) as model,  -- noqa: RF04
    cast(null as timestamp) as last_success
where false
