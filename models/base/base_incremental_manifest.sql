{#-
    One row per model of the incremental set: the loaded_at it has processed
    through. Created empty here; only the on-run-end hook
    (visitor_lookup_update_manifest) writes rows. --full-refresh empties it,
    which sends the next run back to state 1.
-#}
{{
    config(
        materialized='incremental',
        alias='incremental_manifest',
        incremental_strategy='append',
    )
}}

select
    cast(null as string) as model,
    cast(null as timestamp) as last_success
where false
