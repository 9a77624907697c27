{#-
    Facts kept for the rest of the invocation, read once by a hook or a
    model and handed on to the others (a model's counts to the run history).
-#}

{% macro visitor_lookup_invocation_cache() %}
    {#-
        A dict that lives as long as the invocation: dbt hands every hook and
        model the same `graph`, so a fact read once (a setting, a schema's
        tables) is kept there instead of being queried again by each model.
        dbt documents no store of its own for that; this is the one place
        that writes into `graph`, and test_run_history fails where a dbt
        stops sharing it (each run's counts are carried through it).
    -#}
    {%- if 'visitor_lookup' not in graph -%}
        {%- do graph.update({'visitor_lookup': {}}) -%}
    {%- endif -%}
    {{ return(graph['visitor_lookup']) }}
{% endmacro %}


{% macro visitor_lookup_keep_fact(key, row) %}
    {#-
        What a model has just computed and is writing, kept under
        visitor_lookup_fetch_once's key, so that the models after it do not
        read it back. Renders nothing.
    -#}
    {%- do visitor_lookup_invocation_cache().update({key: row}) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_fetch_once(key, query) %}
    {#-
        The first row of a query about this run, run once per invocation
        however many models ask for it, and kept in the invocation cache
        under key. Only for what a model of this run wrote before any model
        that asks runs (ref() orders them), and nothing changes after.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- if key not in cache -%}
        {%- do cache.update({key: run_query(query).rows[0]}) -%}
    {%- endif -%}
    {{ return(cache[key]) }}
{% endmacro %}


{% macro visitor_lookup_carry(name, value) %}
    {#-
        Keep what a model found out (what it merged, that it has nothing to
        merge) for the rest of the invocation: its strategy, its post-hooks
        and the on-run-end hooks read it with visitor_lookup_carried. Only
        while executing; parsing keeps nothing.
    -#}
    {%- if execute -%}
        {%- do visitor_lookup_invocation_cache().setdefault('carried', {}).update({name: value}) -%}
    {%- endif -%}
{% endmacro %}


{% macro visitor_lookup_carried(name, default=none) %}
    {#- What visitor_lookup_carry kept under name in this invocation, or default. -#}
    {{ return(visitor_lookup_invocation_cache().get('carried', {}).get(name, default)) }}
{% endmacro %}
