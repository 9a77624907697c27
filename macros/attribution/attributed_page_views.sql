{% macro visitor_lookup_attributed_page_views() %}
    {#-
        SQL for every processed page view with the user it belongs to: the
        user id on the event when there is one, otherwise the user the lookup
        puts behind the cookie at the instant the page view landed. Used by
        the attribution analyses.
    -#}
    select
        page_views.event_id,
        page_views.visitor_cookie_id,
        page_views.landed,
        page_views.user_id as event_user_id,
        lookup.user_id as lookup_user_id,
        coalesce(page_views.user_id, lookup.user_id) as attributed_user_id
    from {{ ref('visitor_lookup', 'processed_events') }} as page_views
    left join {{ ref('visitor_lookup', 'visitor_lookup') }} as lookup
        on
            page_views.visitor_cookie_id = lookup.visitor_cookie_id
            and page_views.landed between lookup.valid_start_date and lookup.valid_end_date
{% endmacro %}
