-- No stored event was loaded after the point the incremental set has
-- processed through: the manifest's position, or this run's upper limit
-- while the run is under way (dbt build tests processed_events before the
-- on-run-end hook advances the manifest). State and data agree.
with manifest as (
    select max(last_success) as processed_through
    from {{ ref('incremental_manifest') }}
),

run_limits as (
    select upper_limit
    from {{ ref('base_new_event_limits') }}
),

processed as (
    select
        event_id,
        loaded_at
    from {{ ref('processed_events') }}
),

processed_through as (
    select greatest(manifest.processed_through, run_limits.upper_limit) as processed_through
    from manifest
    cross join run_limits
)

select
    processed.event_id,
    processed.loaded_at,
    processed_through.processed_through
from processed
cross join processed_through
where processed.loaded_at > processed_through.processed_through
