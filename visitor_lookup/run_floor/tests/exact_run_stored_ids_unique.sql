-- The ids the latest run stored that are stored more than once: every stored id streams past the run's
-- broadcast ids once, as the uniqueness check of an exact run must read them.
with run_ids as (
    select event_id
    from {{ ref('exact_run_events') }}
    where loaded_at > timestamp '{{ var("run_floor__loaded_after") }}'
),

stored_copies_of_run_ids as (
    select /*+ broadcast(run_ids) */ stored_rows.event_id
    from {{ ref('exact_run_events') }} as stored_rows
    left semi join run_ids
        on stored_rows.event_id = run_ids.event_id
)

select event_id
from stored_copies_of_run_ids
group by event_id
having count(*) > 1
