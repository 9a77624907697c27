{#-
    The incremental manifest: which models of the incremental set have
    processed events up to which loaded_at. Read by get_run_limits, advanced
    by the on-run-end hook for the models that succeeded, and only for them.
-#}

{% macro visitor_lookup_incremental_tag() %}
    {{ return('visitor_lookup_incremental') }}
{% endmacro %}


{% macro visitor_lookup_incremental_models() %}
    {#- Names of the enabled models tagged as part of the incremental set, sorted. -#}
    {%- set names = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and visitor_lookup_incremental_tag() in node.tags -%}
        {%- do names.append(node.name) -%}
    {%- endfor -%}
    {{ return(names | sort) }}
{% endmacro %}


{% macro visitor_lookup_manifest_status(manifest_relation, models) %}
    {#-
        What the manifest says of the given models: min and max last_success
        (timestamp text, or none), which models it has no row for, and run
        numbers: the greatest any model reached, and the run every model has
        succeeded since (0 while a model is missing), and each present
        model's last_success (last_successes). Read once per invocation (the
        on-run-start guard and the limits both ask): from the run's start
        facts where no other process can change the manifest (an embedded
        metastore needs no run lock), otherwise once this run holds the lock.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- set key = 'manifest_status ' ~ manifest_relation ~ ' ' ~ models | join(',') -%}
    {%- if key in cache -%}
        {{ return(cache[key]) }}
    {%- endif -%}
    {%- set status = {
        'min_last_success': none, 'max_last_success': none, 'present': [], 'missing': models,
        'max_last_run_number': 0, 'confirmed_run_number': 0, 'last_successes': {},
    } -%}
    {%- do cache.update({key: status}) -%}
    {%- set existing = visitor_lookup_existing(manifest_relation) -%}
    {%- if existing is none or models | length == 0 -%}
        {{ return(status) }}
    {%- endif -%}
    {%- set facts = visitor_lookup_start_facts() -%}
    {#- Not on --full-refresh: the manifest's model builds it anew before the limits read it. -#}
    {%- if facts['manifest_rows'] is not none and not visitor_lookup_run_lock_needed() and not flags.FULL_REFRESH
        and manifest_relation | string == visitor_lookup_model_relation('incremental_manifest') | string -%}
        {%- set rows = facts['manifest_rows'] | selectattr('model', 'in', models) | list -%}
    {%- else -%}
        {%- set query -%}
            select
                model,
                {{ visitor_lookup_timestamp_text('last_success') }} as last_success,
                coalesce(last_run_number, 0) as last_run_number
            from {{ existing }} as manifest
            where model in ('{{ models | join("', '") }}') and last_success is not null
        {%- endset -%}
        {%- set rows = run_query(query).rows -%}
    {%- endif -%}
    {%- set present = rows | map(attribute='model') | list -%}
    {%- set stamps = rows | map(attribute='last_success') | list -%}
    {%- set run_numbers = rows | map(attribute='last_run_number') | map('int') | list -%}
    {%- set missing = models | reject('in', present) | list -%}
    {%- if stamps -%}
        {#- The text is fixed-width, so its order is the time order. -#}
        {%- do status.update({
            'min_last_success': stamps | min,
            'max_last_success': stamps | max,
            'max_last_run_number': run_numbers | max,
            'confirmed_run_number': 0 if missing else run_numbers | min,
        }) -%}
    {%- endif -%}
    {%- for row in rows -%}
        {%- do status.last_successes.update({row['model']: row['last_success']}) -%}
    {%- endfor -%}
    {%- do status.update({'present': present, 'missing': missing}) -%}
    {{ return(status) }}
{% endmacro %}


{% macro visitor_lookup_update_manifest(results) %}
    {#-
        on-run-end: advance last_success of every tagged model that succeeded
        in this invocation, and record this run's number as its
        last_run_number. The new last_success is the greatest loaded_at the window
        read within its range (valid, duplicate or invalid) when the window brought events newer than the
        manifest's max_last_success, otherwise the window's upper_limit, so an
        empty window still moves the state forward. It never moves backwards.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set tag = visitor_lookup_incremental_tag() -%}
    {%- set succeeded = [] -%}
    {%- set not_succeeded = [] -%}
    {%- set this_run_built = [] -%}
    {%- for result in results if result.node.resource_type == 'model' -%}
        {%- if result.status == 'success' and result.node.name == 'base_events_this_run' -%}
            {%- do this_run_built.append(result.node.name) -%}
        {%- endif -%}
        {%- if tag in result.node.tags -%}
            {%- do (succeeded if result.status == 'success' else not_succeeded).append(result.node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for name in not_succeeded -%}
        {%- do exceptions.warn(
            "Visitor lookup: " ~ name ~ " did not succeed; its manifest entry is left where it was "
            ~ "and the next run catches it up."
        ) -%}
    {%- endfor -%}
    {%- if not succeeded -%}
        {{ return('') }}
    {%- endif -%}
    {#-
        dbt retry finishes a failed run: it keeps that run's selection but
        reruns only what failed or was skipped, which read the run's per-run
        tables, window included. A window selected but absent from the
        results is that case.
    -#}
    {%- set ran = results | map(attribute='node') | map(attribute='name') | list -%}
    {%- set retried = visitor_lookup_selected('base_events_this_run') and 'base_events_this_run' not in ran -%}
    {%- if not this_run_built and not retried -%}
        {%- do exceptions.warn(
            "Visitor lookup: " ~ succeeded | join(', ') ~ " ran without base_events_this_run in the same "
            ~ "invocation, so what they read is not this run's window; the manifest was not advanced. "
            ~ "Run the whole project (dbt run) or select the models with their parents (+model)."
        ) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set manifest = visitor_lookup_model_relation('incremental_manifest') -%}
    {%- set limits = visitor_lookup_run_limits(visitor_lookup_model_relation('base_new_event_limits')) -%}
    {%- set loaded_through = visitor_lookup_window_loaded_through(limits) -%}
    {#- Timestamp texts of one fixed width: their order is the time order. -#}
    {%- if limits.max_last_success is none or (loaded_through is not none and loaded_through > limits.max_last_success) -%}
        {%- set advanced_to = loaded_through or limits.upper_limit -%}
    {%- else -%}
        {%- set advanced_to = limits.upper_limit -%}
    {%- endif -%}
    {#-
        The whole five-row table written again, not merged: one write in
        place of a MERGE's join and rewrite (docs/performance.md). greatest
        skips NULLs, so a model this run did not advance keeps its row, and
        a new one gets its first.
    -#}
    {#- A statement, not run_query: an INSERT returns no rows to fetch over thrift. -#}
    {%- call statement('visitor_lookup_advance_manifest') -%}
        insert overwrite table {{ manifest }}
        select
            coalesce(manifest.model, advanced.model) as model,
            greatest(manifest.last_success, advanced.last_success) as last_success,
            greatest(manifest.last_run_number, advanced.last_run_number) as last_run_number
        from {{ manifest }} as manifest
        full outer join (
            select
                model,
                {{ visitor_lookup_timestamp_literal(advanced_to) }} as last_success,
                {{ limits.run_number }} as last_run_number
            from (values ('{{ succeeded | join("'), ('") }}')) as succeeded (model)
        ) as advanced
            on manifest.model = advanced.model
    {%- endcall -%}
    {#- What the statement wrote, without reading it back: the manifest was read when the run began. -#}
    {%- set before = visitor_lookup_manifest_status(manifest, visitor_lookup_incremental_models()).last_successes -%}
    {%- for name in succeeded | sort -%}
        {%- do log("Visitor lookup: manifest: " ~ name ~ " processed through "
            ~ ([before.get(name) or advanced_to, advanced_to] | max) ~ " (run " ~ limits.run_number ~ ")", info=True) -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}
