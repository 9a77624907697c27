{#-
    The run history: one row per dbt run, build or retry in the table
    visitor_lookup_runs, beside the manifest, failed runs included. The last
    on-run-end hook writes it from what the run already knows: dbt's results,
    and the counts the project's models carry (visitor_lookup_carry: the
    window's, the erasure's, and each merge's in action_merge), and the two
    per-run tables base_new_event_limits and base_cookie_changes_this_run.
    One statement reads those two small tables and appends the row.
-#}

{% macro visitor_lookup_runs_relation() %}
    {{ return(visitor_lookup_relation_beside_manifest('visitor_lookup_runs')) }}
{% endmacro %}


{% macro visitor_lookup_history_tables() %}
    {#- The lookup tables whose changes each row counts, one column per kind of change. -#}
    {{ return(['first_dates', 'user_mapping', 'visitor_lookup_spans']) }}
{% endmacro %}


{% macro visitor_lookup_result_counts(result) %}
    {#-
        The counts a model carried in this invocation (visitor_lookup_carry
        under its name), e.g. {'inserted': 12, 'updated': 3, 'deleted': 0}.
        Empty unless the model succeeded.
    -#}
    {%- if result is none or result.status != 'success' -%}
        {{ return({}) }}
    {%- endif -%}
    {{ return(visitor_lookup_carried(result.node.name, {})) }}
{% endmacro %}


{% macro visitor_lookup_number(value) %}
    {#- A number as SQL, NULL when unknown. -#}
    {{ return('null' if value is none else value) }}
{% endmacro %}


{% macro visitor_lookup_record_run(results) %}
    {#-
        on-run-end, last, after the run lock is released (a failure here
        leaves no lock behind): expire old versions unless the run stopped in
        on-run-start (another run holds the lock, or a var is wrong), then
        append this run's row to visitor_lookup_runs and log it.
    -#}
    {%- if not visitor_lookup_changes_state() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {%- set models = {} -%}
    {%- set failed = [] -%}
    {%- set stopped = namespace(at_start=false) -%}
    {%- for result in results -%}
        {%- if result.node.resource_type == 'model' -%}
            {%- do models.update({result.node.name: result}) -%}
        {%- endif -%}
        {%- if result.status in ['error', 'fail', 'runtime error'] -%}
            {%- do failed.append(result.node.name) -%}
            {%- if 'on-run-start' in result.node.name -%}
                {%- set stopped.at_start = true -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set expired = none if stopped.at_start else visitor_lookup_expire_old_versions() -%}
    {%- set window = visitor_lookup_result_counts(models.get('base_events_this_run')) -%}
    {%- set erasure = visitor_lookup_result_counts(models.get('base_erased_events_this_run')) -%}
    {%- set changed = {} -%}
    {%- set compactions = namespace(count=0) -%}
    {%- for name in visitor_lookup_history_tables() -%}
        {%- set counts = visitor_lookup_result_counts(models.get(name)) -%}
        {%- do changed.update({name: counts}) -%}
        {%- set compactions.count = compactions.count + counts.get('compaction', 0) -%}
    {%- endfor -%}
    {#- The per-run tables hold this run's values only when this run built them. -#}
    {%- set limits_built = 'base_new_event_limits' in models
        and models['base_new_event_limits'].status == 'success' -%}
    {%- set cookies_built = 'base_cookie_changes_this_run' in models
        and models['base_cookie_changes_this_run'].status == 'success' -%}
    {%- set runs = visitor_lookup_runs_relation() -%}
    {%- if visitor_lookup_existing(runs) is none -%}
    {%- call statement('visitor_lookup_create_runs') -%}
        create table if not exists {{ runs }} (
            invocation_id string,
            command string,
            run_number int,
            state int,
            state_name string,
            lower_limit timestamp,
            upper_limit timestamp,
            started_at timestamp,
            ended_at timestamp,
            status string,
            failed_nodes array<string>,
            events_read bigint,
            valid_events bigint,
            duplicate_copies bigint,
            quarantined_events bigint,
            cookies_touched bigint,
            {%- for name in visitor_lookup_history_tables() %}
            {{ name }}_inserted bigint,
            {{ name }}_updated bigint,
            {{ name }}_deleted bigint,
            {%- endfor %}
            compactions int,
            snapshots_expired int,
            erasure_requests_done int,
            events_erased bigint,
            quarantined_erased bigint
        )
        {{ visitor_lookup_kept_table_options() }}
    {%- endcall -%}
    {%- endif -%}
    {%- call statement('visitor_lookup_record_run') -%}
        insert into {{ runs }}
        select
            '{{ invocation_id }}' as invocation_id,
            'dbt {{ flags.WHICH }}' as command,
            limits.run_number,
            limits.state,
            limits.state_name,
            limits.lower_limit,
            limits.upper_limit,
            timestamp '{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}+00:00' as started_at,
            current_timestamp() as ended_at,
            '{{ "failed" if failed else "success" }}' as status,
            {{ visitor_lookup_string_array(failed) }} as failed_nodes,
            {{ visitor_lookup_number(window.get('read')) }} as events_read,
            {{ visitor_lookup_number(window.get('valid')) }} as valid_events,
            {{ visitor_lookup_number(window.get('duplicate')) }} as duplicate_copies,
            {{ visitor_lookup_number(window.get('quarantined')) }} as quarantined_events,
            cookies.cookies_touched,
            {%- for name in visitor_lookup_history_tables() %}
            {{ visitor_lookup_number(changed[name].get('inserted')) }} as {{ name }}_inserted,
            {{ visitor_lookup_number(changed[name].get('updated')) }} as {{ name }}_updated,
            {{ visitor_lookup_number(changed[name].get('deleted')) }} as {{ name }}_deleted,
            {%- endfor %}
            {{ compactions.count }} as compactions,
            {{ visitor_lookup_number(expired) }} as snapshots_expired,
            {{ visitor_lookup_number(erasure.get('requests')) }} as erasure_requests_done,
            {{ visitor_lookup_number(erasure.get('events')) }} as events_erased,
            {{ visitor_lookup_number(erasure.get('quarantined')) }} as quarantined_erased
        from (
            {%- if limits_built %}
            select
                run_number,
                state,
                state_name,
                lower_limit,
                upper_limit
            from {{ visitor_lookup_model_relation('base_new_event_limits') }}
            {%- else %}
            select
                cast(null as int) as run_number,
                cast(null as int) as state,
                cast(null as string) as state_name,
                cast(null as timestamp) as lower_limit,
                cast(null as timestamp) as upper_limit
            {%- endif %}
        ) as limits
        cross join (
            {%- if cookies_built %}
            select count(*) as cookies_touched
            from {{ visitor_lookup_model_relation('base_cookie_changes_this_run') }}
            {%- else %}
            select cast(null as bigint) as cookies_touched
            {%- endif %}
        ) as cookies
    {%- endcall -%}
    {%- do log(
        "Visitor lookup: run recorded in " ~ runs ~ ": "
        ~ ("failed (" ~ failed | join(', ') ~ ")" if failed else "success")
        ~ (", " ~ window['read'] ~ " events read" if 'read' in window else "") ~ "; "
        ~ ((modules.datetime.datetime.now() - started).total_seconds() | round(1)) ~ " s",
        info=True,
    ) -%}
    {{ return('') }}
{% endmacro %}
