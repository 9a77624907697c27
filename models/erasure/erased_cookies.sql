{#-
    The cookies an erasure took events from, kept until every model of the
    incremental set has recomputed them: processed_events deletes the erased
    events, so nothing else would remember which cookies they stood on. One
    row per cookie and run; a run deletes the rows of the runs every model
    has succeeded through (confirmed_run_number), so an erased cookie id
    stays here no longer than until the next successful run.
-#}
{{
    config(
        materialized='action_merge',
        schema=visitor_lookup_schema(),
        unique_key=['visitor_cookie_id', 'run_number'],
    )
}}

{%- set limits = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')) -%}
{%- set erasures_relation = ref('visitor_lookup', 'base_erased_events_this_run') -%}
{#- Most runs erase nothing and the table is empty: then no MERGE at all. -#}
{%- set touches = visitor_lookup_erasure_rows(erasures_relation, ['event', 'replaced'], with_erased_cookies=true) %}

{{ action_merge_nothing_to_merge(touches == 0) }}

with erasures as (
    select
        visitor_cookie_id,
        landed,
        with_user
    from {{ erasures_relation }}
    where kind in ('event', 'replaced')
),

stored_touches as (
    select
        visitor_cookie_id,
        run_number
    from {{ visitor_lookup_this_or_empty({'visitor_cookie_id': 'string', 'run_number': 'int'}) }}
),

new_touches as (
    select
        visitor_cookie_id,
        min(landed) as earliest_landed,
        min(case when with_user then landed end) as user_changed_from,
        {{ limits.run_number }} as run_number,
        'insert' as merge_action
    from erasures
    group by visitor_cookie_id
),

recomputed_touches as (
    select
        visitor_cookie_id,
        cast(null as timestamp) as earliest_landed,
        cast(null as timestamp) as user_changed_from,
        run_number,
        'delete' as merge_action
    from stored_touches
    where run_number <= {{ limits.confirmed_run_number }}
),

touches as (
    select
        visitor_cookie_id,
        earliest_landed,
        user_changed_from,
        run_number,
        merge_action
    from new_touches
    union all
    select
        visitor_cookie_id,
        earliest_landed,
        user_changed_from,
        run_number,
        merge_action
    from recomputed_touches
)

select
    merge_action,
    visitor_cookie_id,
    earliest_landed,
    user_changed_from,
    run_number
from touches
