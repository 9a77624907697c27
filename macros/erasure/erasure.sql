{#-
    Erasure on request (spec §7). A team adds requests to the table
    erasure_requests (the source visitor_lookup_erasure, erasure_requests.sql),
    beside the manifest unless a var says otherwise: each names a user id or
    a cookie id. The next run removes every stored copy that carries one
    (base_erased_events_this_run lists them; processed_events and
    quarantined_events delete them; erased_cookies carries the cookies to
    recompute), and every later run keeps such copies out
    (base_events_this_run). erasure_log records each request once done.
-#}

{% macro visitor_lookup_erasure_rows(erasures_relation, kinds, with_erased_cookies=false) %}
    {#-
        How many rows of base_erased_events_this_run have one of these kinds,
        or when none has, with_erased_cookies, how many rows erased_cookies
        holds: zero means a model that erases nothing this run merges nothing.
        One while parsing or on a first build. erased_cookies is counted
        before any model runs (visitor_lookup_start_facts): on
        --full-refresh it is dropped and created while the models run.
    -#}
    {%- if not execute or not visitor_lookup_is_incremental() -%}
        {{ return(1) }}
    {%- endif -%}
    {%- set facts = visitor_lookup_erasure_facts(erasures_relation) -%}
    {%- set found = namespace(rows=0) -%}
    {%- for kind in kinds -%}
        {%- set found.rows = found.rows + facts[kind] -%}
    {%- endfor -%}
    {%- if found.rows == 0 and with_erased_cookies -%}
        {%- set found.rows = visitor_lookup_start_facts()['erased_cookies_kept'] -%}
    {%- endif -%}
    {{ return(found.rows) }}
{% endmacro %}


{% macro visitor_lookup_erasure_facts(erasures_relation) %}
    {#-
        What this run erases, counted once per invocation: the rows of
        base_erased_events_this_run of each kind, and the requests
        erasure_requests holds.
    -#}
    {%- set requests = visitor_lookup_existing(visitor_lookup_erasure_requests_relation()) -%}
    {%- set query -%}
        select
            count_if(kind = 'request') as request,
            count_if(kind = 'event') as event,
            count_if(kind = 'replaced') as replaced,
            count_if(kind = 'quarantined') as quarantined,
            {{ '(select count(*) from ' ~ requests ~ ')' if requests is not none else '0' }} as requests
        from {{ erasures_relation }}
    {%- endset -%}
    {{ return(visitor_lookup_fetch_once('erasure facts ' ~ erasures_relation, query)) }}
{% endmacro %}


{% macro visitor_lookup_erasure_reads(erasures_relation) %}
    {#-
        What base_events_this_run does for erasures this run: `requests`, how
        many requests exist (their ids are kept out), and `erased_events`,
        how many stored events this run erases (their other copies are read
        again). Zero while parsing or before erasure_requests exists.
    -#}
    {%- set requests = visitor_lookup_erasure_requests_relation() -%}
    {%- if not execute or visitor_lookup_existing(requests) is none -%}
        {{ return({'requests': 0, 'erased_events': 0}) }}
    {%- endif -%}
    {%- set facts = visitor_lookup_erasure_facts(erasures_relation) -%}
    {{ return({'requests': facts['requests'], 'erased_events': facts['event']}) }}
{% endmacro %}


{% macro visitor_lookup_no_erasure_pending(none_pending, requests) %}
    {#-
        What base_erased_events_this_run knows before its query runs, kept
        for its post-hook: when no request is pending, it has nothing to
        count; and then the erasure facts the later models ask for
        (visitor_lookup_erasure_facts) are known too: nothing of any kind,
        and the requests erasure_requests holds. Renders nothing.
    -#}
    {%- do visitor_lookup_carry('no erasure pending', none_pending) -%}
    {%- if none_pending -%}
        {%- do visitor_lookup_keep_fact('erasure facts ' ~ this, {
            'request': 0, 'event': 0, 'replaced': 0, 'quarantined': 0, 'requests': requests,
        }) -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_log_erasure(erased_events) %}
    {#-
        Post-hook of base_erased_events_this_run: log what this run erases
        and make it the model's result (dbt's line, the run history).
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- if visitor_lookup_carried('no erasure pending', false) -%}
        {%- do visitor_lookup_carry(model.name, {'requests': 0, 'events': 0, 'quarantined': 0}) -%}
        {%- do store_raw_result(
            'main', message='0 requests, 0 events erased, 0 quarantined erased', code='erasure', rows_affected=0
        ) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set query -%}
        select
            count_if(kind = 'request') as requests,
            count(distinct case when kind = 'event' then event_id end) as events,
            count(distinct quarantine_key) as quarantined
        from {{ erased_events }}
    {%- endset -%}
    {%- set counts = run_query(query).rows[0] -%}
    {%- do visitor_lookup_carry(model.name, {
        'requests': counts['requests'], 'events': counts['events'], 'quarantined': counts['quarantined'],
    }) -%}
    {%- do store_raw_result(
        'main',
        message=counts['requests'] ~ ' requests, ' ~ counts['events'] ~ ' events erased, '
            ~ counts['quarantined'] ~ ' quarantined erased',
        code='erasure',
        rows_affected=counts['events'],
    ) -%}
    {%- if counts['requests'] > 0 -%}
        {%- do log(
            "Visitor lookup: erasing " ~ counts['requests'] ~ " request(s): " ~ counts['events']
            ~ " processed events and " ~ counts['quarantined'] ~ " quarantined rows",
            info=True,
        ) -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
