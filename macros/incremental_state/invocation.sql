{#-
    What this dbt invocation is: whether it changes the project's state,
    and facts read once per invocation and kept for its hooks and models.
-#}

{% macro visitor_lookup_invocation_cache() %}
    {#-
        A dict that lives as long as the invocation: dbt hands every hook and
        model the same `graph`, so a fact read once (a setting, a schema's
        tables) is kept there instead of being queried again by each model.
    -#}
    {%- if 'visitor_lookup' not in graph -%}
        {%- do graph.update({'visitor_lookup': {}}) -%}
    {%- endif -%}
    {{ return(graph['visitor_lookup']) }}
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


{% macro visitor_lookup_state_models() %}
    {#- The models that keep state from run to run: the incremental set, the manifest, the erasure records. -#}
    {{ return(visitor_lookup_incremental_models()
        + ['incremental_manifest', 'erased_cookies', 'erasure_log']) }}
{% endmacro %}


{% macro visitor_lookup_selected(name) %}
    {{ return(('model.visitor_lookup.' ~ name) in selected_resources) }}
{% endmacro %}


{% macro visitor_lookup_changes_state() %}
    {#-
        Whether this invocation may change the project's state: a run, build
        or retry that selects a model keeping state. Only such an invocation
        takes the run lock, creates erasure_requests, writes a row of the run
        history and expires old versions: a host project's run of its own
        models, and the inspect-only `dbt run --select base_new_event_limits`,
        do none of that.
    -#}
    {%- if not execute or flags.WHICH not in ['run', 'build', 'retry'] -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for name in visitor_lookup_state_models() if visitor_lookup_selected(name) -%}
        {{ return(true) }}
    {%- endfor -%}
    {{ return(false) }}
{% endmacro %}


{% macro visitor_lookup_guard_selection() %}
    {#-
        A run that selects models of the incremental set must select the
        run's intake with them (the limits and the window they read), or
        what they merged would not be this run's window and the manifest
        could not advance. Orchestrators that run one model per task hit
        this first. dbt retry keeps the failed run's selection, so it passes.
    -#}
    {%- if not visitor_lookup_changes_state() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set chosen = [] -%}
    {%- for name in visitor_lookup_incremental_models() if visitor_lookup_selected(name) -%}
        {%- do chosen.append(name) -%}
    {%- endfor -%}
    {%- set missing = [] -%}
    {%- for name in ['base_new_event_limits', 'base_events_this_run'] if not visitor_lookup_selected(name) -%}
        {%- do missing.append(name) -%}
    {%- endfor -%}
    {%- if chosen and missing -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: this invocation selects " ~ chosen | join(', ') ~ " of the incremental set "
            ~ "without the run's intake (" ~ missing | join(', ') ~ "), so the manifest could not advance. "
            ~ "Run the whole set in one invocation: dbt build --selector visitor_lookup_incremental "
            ~ "(or select the models with their parents, +model)."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
