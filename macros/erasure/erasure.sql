{#-
    Erasure on request (spec §7). A team adds requests to the table
    erasure_requests (the source visitor_lookup_erasure), beside the
    manifest unless a var says otherwise: each names a user id or a cookie
    id. The next run removes every stored copy that carries one
    (base_erased_events_this_run lists them; processed_events and
    quarantined_events delete them; erased_cookies carries the cookies to
    recompute), and every later run keeps such copies out
    (base_events_this_run). erasure_log records each request once done.
-#}

{% macro visitor_lookup_erasure_requests_relation() %}
    {#- erasure_requests, where the source visitor_lookup_erasure puts it. -#}
    {{ return(visitor_lookup_source_relation('visitor_lookup_erasure', 'erasure_requests')) }}
{% endmacro %}


{% macro visitor_lookup_create_erasure_requests() %}
    {#- Create erasure_requests when it does not exist yet; true when it was just created. -#}
    {%- set requests = visitor_lookup_erasure_requests_relation() -%}
    {%- if visitor_lookup_existing(requests) is not none -%}
        {{ return(false) }}
    {%- endif -%}
    {%- call statement('visitor_lookup_create_erasure_requests') -%}
        create table if not exists {{ requests }} (
            request_id string,
            user_id string,
            visitor_cookie_id string,
            requested_at timestamp
        )
        {{ visitor_lookup_kept_table_options() }}
    {%- endcall -%}
    {%- do adapter.cache_added(requests.incorporate(type='table')) -%}
    {{ return(true) }}
{% endmacro %}


{% macro visitor_lookup_place_erasure_requests() %}
    {#-
        on-run-start, first, before anything lists erasure_requests' schema:
        stop the run when erasure_requests would not be beside the manifest
        and no var says where it is (a host project's generate_schema_name
        moves the models, and a source's schema is written in YAML, where no
        macro runs); create the schema the var names when it is another one.
    -#}
    {%- if not visitor_lookup_changes_state() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set chosen = visitor_lookup_var_schema_name('visitor_lookup__erasure_requests_schema') -%}
    {%- set requests = visitor_lookup_erasure_requests_relation() -%}
    {%- set manifest = visitor_lookup_model_relation('incremental_manifest') -%}
    {%- if requests.schema | lower == manifest.schema | lower -%}
        {{ return('') }}
    {%- endif -%}
    {%- if chosen is none -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: the package's tables are in schema " ~ manifest.schema ~ " (your generate_schema_name), "
            ~ "but erasure_requests would be in " ~ requests.schema ~ ". Set var visitor_lookup__erasure_requests_schema "
            ~ "to " ~ manifest.schema ~ " (where an existing erasure_requests is) or to the schema you want it in; "
            ~ "this run changed nothing."
        ) }}
    {%- endif -%}
    {%- do adapter.create_schema(requests) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_prepare_erasure_requests() %}
    {#-
        on-run-start: create erasure_requests when it does not exist yet, and
        stop the run, before any model, when a request names neither id.
    -#}
    {%- if not visitor_lookup_changes_state() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set requests = visitor_lookup_erasure_requests_relation() -%}
    {%- if visitor_lookup_create_erasure_requests() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set bad = visitor_lookup_start_facts()['bad_requests'] -%}
    {%- if bad -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: erasure request(s) " ~ bad ~ " in " ~ requests
            ~ " must have a request_id and name a user_id or a visitor_cookie_id. Fix or delete them; "
            ~ "this run changed nothing."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_request_erasure(user_id=none, visitor_cookie_id=none, request_id=none) %}
    {#-
        dbt run-operation visitor_lookup_request_erasure --args '{user_id: "u-42"}': add a request (a
        user id, a cookie id or both) for the next run; the request id defaults to a new UUID.
    -#}
    {%- set ids = {'user_id': user_id, 'visitor_cookie_id': visitor_cookie_id} -%}
    {%- set named = [] -%}
    {%- for name, value in ids.items() if value is not none and value | string | trim -%}
        {%- do named.append(name) -%}
    {%- endfor -%}
    {%- if not named -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: an erasure request names a user_id or a visitor_cookie_id, got neither. "
            ~ "Example: dbt run-operation visitor_lookup_request_erasure --args '{user_id: \"u-42\"}'"
        ) }}
    {%- endif -%}
    {%- set requests = visitor_lookup_erasure_requests_relation() -%}
    {#- Before the first run, the schema may not exist yet either. -#}
    {%- do adapter.create_schema(requests) -%}
    {%- do visitor_lookup_create_erasure_requests() -%}
    {%- call statement('visitor_lookup_add_erasure_request') -%}
        insert into {{ requests }}
        select
            coalesce({{ visitor_lookup_string_literal(request_id) }}, uuid()) as request_id,
            {{ visitor_lookup_string_literal(user_id) }} as user_id,
            {{ visitor_lookup_string_literal(visitor_cookie_id) }} as visitor_cookie_id,
            current_timestamp() as requested_at
    {%- endcall -%}
    {%- do log("Visitor lookup: erasure of " ~ named | join(' and ') ~ " requested; the next run does it.", info=True) -%}
{% endmacro %}


{% macro visitor_lookup_erasure_request_counts() %}
    {#-
        How many requests erasure_requests holds, and how many of them are
        pending (not in erasure_log yet), as the run read them before its
        models (visitor_lookup_start_facts); zero while parsing or before the
        table exists.
    -#}
    {%- if not execute -%}
        {{ return({'requests': 0, 'pending': 0}) }}
    {%- endif -%}
    {%- set facts = visitor_lookup_start_facts() -%}
    {{ return({'requests': facts['requests'], 'pending': facts['pending_requests']}) }}
{% endmacro %}


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
