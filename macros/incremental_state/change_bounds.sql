{% macro visitor_lookup_change_bounds(changes_relation, built=false) %}
    {#-
        What this run's cookie changes (base_cookie_changes_this_run) amount
        to, read once per invocation for the models that build on them:
          touched                  'true', or 'false' when the run touches no
                                   cookie: a model filters its changes with
                                   it, so Spark drops the whole query (and
                                   the scans of stored tables) at planning
          earliest_removed_landed  smallest value of that column, and
          user_changed_from        of that one, as Spark literals (NULL when
                                   none), so scans of stored events prune by
                                   them
          no_cookie_touched        true when the run touches no cookie, and
          no_user_changed          when no cookie's user history changes:
                                   the model has nothing to merge
          erasing                  true when an erasure took events from
                                   a touched cookie (the lookup tables are
                                   then compacted whatever their files)
        base_cookie_changes_this_run reads them in its post-hook (built:
        the table was just written), before the models that ask.
    -#}
    {%- set columns = ['earliest_removed_landed', 'user_changed_from'] -%}
    {#- Parsing, or compiling before the first run: no change known yet, bounds NULL. -#}
    {%- set found = {
        'touched_cookies': 1, 'earliest_removed_landed': none, 'user_changed_from': none, 'erasing': false,
    } -%}
    {%- set known = namespace(changes=false) -%}
    {%- if execute and (built or visitor_lookup_existing(changes_relation) is not none) -%}
        {%- set query -%}
            select
                count(*) as touched_cookies,
                {%- for column in columns %}
                {{ visitor_lookup_timestamp_text('min(' ~ column ~ ')') }} as {{ column }},
                {%- endfor %}
                coalesce(bool_or(erased), false) as erasing
            from {{ changes_relation }}
        {%- endset -%}
        {%- set found = visitor_lookup_fetch_once('change bounds ' ~ changes_relation, query) -%}
        {%- set known.changes = true -%}
    {%- endif -%}
    {%- set bounds = {
        'touched': 'true' if found['touched_cookies'] > 0 else 'false',
        'no_cookie_touched': found['touched_cookies'] == 0,
        'no_user_changed': known.changes and found['user_changed_from'] is none,
        'erasing': found['erasing'],
    } -%}
    {%- for column in columns -%}
        {%- do bounds.update({column: visitor_lookup_timestamp_literal(found[column])}) -%}
    {%- endfor -%}
    {{ return(bounds) }}
{% endmacro %}
