-- The ids the latest run stored that are stored more than once: every stored id streams past the run's
-- broadcast ids once (on Iceberg, the ids of the files holding a key of theirs), as the uniqueness check
-- of an exact run must read them.
{%- set run_rows -%}
loaded_at > timestamp '{{ var("run_floor__loaded_after") }}'
{%- endset %}
{%- set keys_of_run_ids -%}
select event_key from {{ ref('exact_run_events') }} where {{ run_rows }}
{%- endset %}

with run_ids as (
    select event_id
    from {{ ref('exact_run_events') }}
    where {{ run_rows }}
),

stored_copies_of_run_ids as (
    select /*+ broadcast(run_ids) */ stored_rows.event_id
    from {{ exact_run_rows_of_keys(ref('exact_run_events'), keys_of_run_ids) }} as stored_rows
    left semi join run_ids
        on stored_rows.event_id = run_ids.event_id
)

select event_id
from stored_copies_of_run_ids
group by event_id
having count(*) > 1
