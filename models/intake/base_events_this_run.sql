{#-
    Every event with loaded_at inside this run's range, and those only the
    quarantine takes (loaded in the future, or without loaded_at), normalised, each
    marked with why it is invalid (NULL when valid) and, among valid copies
    of one event_id, its rank (1 = the copy that counts). Copies that carry
    an id named by an erasure request never enter (spec §7); when this run
    erases stored events, every other copy of them loaded up to the upper
    limit is read again, so the best that remains takes their place.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
        post_hook="{{ visitor_lookup_log_window(this) }}",
    )
}}

{%- set limits = visitor_lookup_run_limits(ref('visitor_lookup', 'base_new_event_limits')) -%}
{%- set max_skew_minutes = visitor_lookup_var_whole_number('visitor_lookup__max_clock_skew_minutes', 0) -%}
{%- set erasures_relation = ref('visitor_lookup', 'base_erased_events_this_run') -%}
{%- set requests_relation = source('visitor_lookup_erasure', 'erasure_requests') -%}
{%- set erasure = visitor_lookup_erasure_reads(erasures_relation) -%}
{%- set events_source = source('visitor_lookup', 'pageviews') -%}
{%- set events = visitor_lookup_events_read(events_source) -%}
{%- set layout = visitor_lookup_event_layout() -%}
{#- A folder's files new since the last run that completed, read whole apart from the range (state 3 or 4). -#}
{%- set recent_files = visitor_lookup_recent_event_files(events_source, limits) %}

with source_events as (
    -- the rows the filter keeps, with the columns the layout makes (visitor_lookup_event_layout)
    {{ visitor_lookup_mapped_events(events, layout) }}
),
{%- if recent_files is not none %}

recent_source_events as (
    {{ visitor_lookup_mapped_events(recent_files, layout) }}
),
{%- endif %}
{%- if erasure.erased_events > 0 %}

erased_event_ids as (
    select distinct event_id
    from {{ erasures_relation }}
    where kind = 'event'
),
{%- endif %}
{%- if recent_files is not none %}

recent_events_apart as (
    -- what the range below leaves of the new files: loaded from the start date to before the lower limit,
    -- without loaded_at and, where the range leaves them, loaded in the future
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from recent_source_events
    where
        loaded_at is null
        or (
            loaded_at >= {{ visitor_lookup_timestamp_literal(visitor_lookup_start_date()) }}
            and loaded_at < {{ visitor_lookup_timestamp_literal(limits.lower_limit) }}
            {%- if erasure.erased_events > 0 %}
            -- copies of erased events: read below in every file, not twice
            and (
                event_id is null
                or cast(event_id as string) not in (select erased_event_ids.event_id from erased_event_ids)
            )
            {%- endif %}
        )  -- noqa: LT02
        {%- if not limits.reads_lookback %}
        or loaded_at > current_timestamp() + interval {{ max_skew_minutes }} minutes
        {%- endif %}
),
{%- endif %}

events_in_range as (
    -- Events loaded in the future fall in no range: every run that reads its lookback reads them (their
    -- loaded_at prunes the files and row groups that hold none) and the quarantine keeps them once. A
    -- run's upper limit is never after its clock, so the two cannot meet. A run that does not read its
    -- lookback finds them, and the events without loaded_at, where the previous run did, and in the new
    -- files (recent_events_apart).
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from source_events
    where
        loaded_at >= {{ visitor_lookup_timestamp_literal(limits.lower_limit) }}
        and loaded_at <= {{ visitor_lookup_timestamp_literal(limits.upper_limit) }}
        {%- if limits.reads_lookback %}
        or loaded_at > current_timestamp() + interval {{ max_skew_minutes }} minutes
        {%- endif %}
        {%- if limits.state <= 2 or limits.new_files is none %}
        or loaded_at is null
        {%- endif %}
        {%- if erasure.erased_events > 0 %}
        or loaded_at <= {{ visitor_lookup_timestamp_literal(limits.upper_limit) }}
        and cast(event_id as string) in (select erased_event_ids.event_id from erased_event_ids)
        {%- endif %}
),

events_in_window as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from events_in_range
    {%- if recent_files is not none %}
    union all
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at
    from recent_events_apart
    {%- endif %}
),

normalised_events as (
    select
        cast(event_id as string) as event_id,
        {{ visitor_lookup_normalise_id('visitor_cookie_id') }} as visitor_cookie_id,
        {{ visitor_lookup_normalise_id('user_id') }} as user_id,
        cast(landed as timestamp) as landed,
        cast(loaded_at as timestamp) as loaded_at,
        cast(visitor_cookie_id as string) as received_visitor_cookie_id,
        cast(user_id as string) as received_user_id
    from events_in_window
),
{%- if erasure.requests > 0 %}

requested_ids as (
    select
        {{ visitor_lookup_normalise_id('user_id') }} as user_id,
        {{ visitor_lookup_normalise_id('visitor_cookie_id') }} as visitor_cookie_id
    from {{ requests_relation }}
),

requested_users as (
    select distinct user_id
    from requested_ids
    where user_id is not null
),

requested_cookies as (
    select distinct visitor_cookie_id
    from requested_ids
    where visitor_cookie_id is not null
),

remaining_events as (
    -- the copies no erasure request names
    select /*+ broadcast(requested_users, requested_cookies) */
        normalised_events.event_id,
        normalised_events.visitor_cookie_id,
        normalised_events.user_id,
        normalised_events.landed,
        normalised_events.loaded_at,
        normalised_events.received_visitor_cookie_id,
        normalised_events.received_user_id
    from normalised_events
    left anti join requested_users
        on normalised_events.user_id = requested_users.user_id
    left anti join requested_cookies
        on normalised_events.visitor_cookie_id = requested_cookies.visitor_cookie_id
),
{%- endif %}

checked_events as (
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        received_visitor_cookie_id,
        received_user_id,
        case
            when visitor_cookie_id is null then 'visitor_cookie_id is null or blank'
            when event_id is null then 'event_id is null'
            when landed is null then 'landed is null'
            when loaded_at is null then 'loaded_at is null'
            when landed > loaded_at + interval {{ max_skew_minutes }} minutes
                then 'landed is more than {{ max_skew_minutes }} minutes after loaded_at'
            when loaded_at > current_timestamp() + interval {{ max_skew_minutes }} minutes
                then 'loaded_at is more than {{ max_skew_minutes }} minutes in the future'
        end as invalid_reason
    from {{ 'remaining_events' if erasure.requests > 0 else 'normalised_events' }}
),

ranked_copies as (
    -- the ids as received matter only to the quarantine: a valid event's go
    -- through the sort as NULL, a narrower sort (docs/performance.md)
    select
        event_id,
        visitor_cookie_id,
        user_id,
        landed,
        loaded_at,
        case when invalid_reason is not null then received_visitor_cookie_id end as received_visitor_cookie_id,
        case when invalid_reason is not null then received_user_id end as received_user_id,
        invalid_reason,
        row_number() over (
            partition by event_id, invalid_reason is null
            order by {{ visitor_lookup_copy_order() }}
        ) as copy_rank
    from checked_events
)

select
    event_id,
    visitor_cookie_id,
    user_id,
    landed,
    loaded_at,
    received_visitor_cookie_id,
    received_user_id,
    invalid_reason,
    case when invalid_reason is null then copy_rank end as copy_rank,
    {{ visitor_lookup_partition_key('visitor_cookie_id') }} as vcid_first_two
from ranked_copies
