-- The runs, newest first: how long each took, the window it read, what it
-- found and what it changed; failed runs name what failed. The last 20:
-- dbt show --select recent_runs --limit 20
-- The on-run-end hook keeps the table beside the manifest.
{%- set manifest_relation = ref('visitor_lookup', 'incremental_manifest') %}
{%- set runs_relation = manifest_relation.incorporate(path={'identifier': 'visitor_lookup_runs'}) %}

with runs as (
    select
        run_number,
        status,
        failed_nodes,
        started_at,
        ended_at,
        lower_limit,
        upper_limit,
        events_read,
        quarantined_events,
        cookies_touched,
        first_dates_inserted,
        first_dates_updated,
        first_dates_deleted,
        user_mapping_inserted,
        user_mapping_updated,
        user_mapping_deleted,
        visitor_lookup_spans_inserted,
        visitor_lookup_spans_updated,
        visitor_lookup_spans_deleted,
        compactions,
        snapshots_expired,
        events_erased
    from {{ runs_relation }}
),

runs_with_duration as (
    select
        run_number,
        status,
        array_join(failed_nodes, ', ') as failed,
        started_at,
        round((unix_micros(ended_at) - unix_micros(started_at)) / 1e6, 1) as seconds,
        lower_limit,
        upper_limit,
        events_read,
        quarantined_events,
        cookies_touched,
        first_dates_inserted
        + coalesce(first_dates_updated, 0)
        + coalesce(first_dates_deleted, 0) as first_dates_changed,
        user_mapping_inserted
        + coalesce(user_mapping_updated, 0)
        + coalesce(user_mapping_deleted, 0) as user_mapping_changed,
        visitor_lookup_spans_inserted
        + coalesce(visitor_lookup_spans_updated, 0)
        + coalesce(visitor_lookup_spans_deleted, 0) as visitor_lookup_spans_changed,
        compactions,
        snapshots_expired,
        events_erased
    from runs
)

select
    run_number,
    started_at,
    seconds,
    status,
    events_read,
    cookies_touched,
    first_dates_changed,
    user_mapping_changed,
    visitor_lookup_spans_changed,
    compactions,
    snapshots_expired,
    events_erased,
    quarantined_events,
    failed,
    lower_limit,
    upper_limit
from runs_with_duration
order by started_at desc
