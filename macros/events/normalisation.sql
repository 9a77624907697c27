{#- How received events are cleaned and which copy of an event_id counts (spec §3). -#}

{% macro visitor_lookup_normalise_id(column) -%}
    {#-
        Trim leading and trailing whitespace (space, tab, line feed, carriage
        return, vertical tab, form feed); blank becomes NULL. A trim by a set
        of characters: a regular expression that finds the same runs was
        measured slower (docs/performance.md).
    -#}
    nullif(trim(both ' \t\n\r\u000B\u000C' from cast({{ column }} as string)), '')
{%- endmacro %}


{% macro visitor_lookup_copy_order(alias=none) -%}
    {#-
        The order of the copies of one event_id, as a list of sort
        expressions: the smallest loaded_at counts; exact ties fall to
        landed, then cookie, then user id (NULL first). Sorting by these
        columns was measured faster than sorting by one struct of them
        (docs/performance.md).
    -#}
    {%- set prefix = alias ~ '.' if alias else '' -%}
    {{ prefix }}loaded_at, {{ prefix }}landed, {{ prefix }}visitor_cookie_id, coalesce({{ prefix }}user_id, '')
{%- endmacro %}


{% macro visitor_lookup_copy_precedence(alias=none) -%}
    {#- The same order as one value, so that two copies compare with < -#}
    struct({{ visitor_lookup_copy_order(alias) }})
{%- endmacro %}


{% macro visitor_lookup_same_event_content(left, right) %}
    {#- True when two copies of an event put the same user on the same cookie at the same instant. -#}
    {{ return(
        "(" ~ left ~ ".visitor_cookie_id = " ~ right ~ ".visitor_cookie_id and "
        ~ left ~ ".landed = " ~ right ~ ".landed and "
        ~ left ~ ".user_id <=> " ~ right ~ ".user_id)"
    ) }}
{% endmacro %}
