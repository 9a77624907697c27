-- How much the lookup adds to attribution: the share of page views with a
-- user when only the event's own user id counts, against the share once the
-- lookup fills in the anonymous ones.
with attributed_page_views as (
    {{ visitor_lookup_attributed_page_views() }}
)

select
    count(*) as page_views,
    count(event_user_id) as with_event_user,
    count(attributed_user_id) as with_attributed_user,
    count(attributed_user_id) - count(event_user_id) as gained,
    round(count(event_user_id) / count(*), 4) as share_with_event_user,
    round(count(attributed_user_id) / count(*), 4) as share_with_attributed_user
from attributed_page_views
