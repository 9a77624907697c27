{#-
    Which user stood behind a cookie at any instant (spec §4): the stored
    spans, each current span ending at the processed-through watermark, the
    greatest landed of all valid events processed so far. Join page views on
    visitor_cookie_id and landed between valid_start_date and valid_end_date.
-#}
{{ config(schema=visitor_lookup_schema()) }}

with spans as (
    select
        visitor_cookie_id,
        user_id,
        valid_start_date,
        valid_end_date,
        is_current,
        start_day,
        vcid_first_two
    from {{ ref('visitor_lookup', 'visitor_lookup_spans') }}
),

watermark as (
    select max(landed) as processed_through
    from {{ ref('visitor_lookup', 'processed_events') }}
)

select
    spans.visitor_cookie_id,
    spans.user_id,
    spans.valid_start_date,
    coalesce(spans.valid_end_date, watermark.processed_through) as valid_end_date,
    spans.is_current,
    spans.start_day,
    spans.vcid_first_two
from spans
cross join watermark
