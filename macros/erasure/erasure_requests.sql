{#-
    The erasure requests table (spec §7): where it lives, how it is created
    and moved beside the manifest, how a request is added, and how many
    requests wait.
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
