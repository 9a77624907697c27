-- Every processed page view with the user it belongs to: the user id on the
-- event when there is one, otherwise the user the lookup puts behind the
-- cookie at the instant the page view landed (anonymous history before a
-- login belongs to the first user).
with attributed_page_views as (
    {{ visitor_lookup_attributed_page_views() }}
)

select
    event_id,
    visitor_cookie_id,
    landed,
    event_user_id,
    lookup_user_id,
    attributed_user_id
from attributed_page_views
