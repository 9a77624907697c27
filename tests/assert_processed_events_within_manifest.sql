-- No stored event was loaded after the point the manifest says the
-- incremental set has processed through: state and data agree.
with manifest as (
    select max(last_success) as processed_through
    from {{ ref('base_incremental_manifest') }}
),

processed as (
    select
        event_id,
        loaded_at
    from {{ ref('base_processed_events') }}
)

select
    processed.event_id,
    processed.loaded_at,
    manifest.processed_through
from processed
cross join manifest
where processed.loaded_at > manifest.processed_through
