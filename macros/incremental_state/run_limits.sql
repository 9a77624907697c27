{#-
    The four states of the incremental set and the loaded_at range each run
    reads (spec §5), Snowplow-style. Every bound is computed by Spark once,
    logged, and stored in base_new_event_limits, which the window reads.
-#}

{% macro get_run_limits(min_last_success, max_last_success, models_in_manifest, models_missing, start_date) %}
    {#-
        SQL for one row (state, state_name, lower_limit, upper_limit) from what
        the manifest says of the enabled tagged models:
          1 first run      nothing in the manifest
          2 new model      some enabled model missing from the manifest
          3 out of sync    min_last_success < max_last_success
          4 standard       otherwise
    -#}
    {%- set backfill = "interval " ~ visitor_lookup_var_whole_number('visitor_lookup__backfill_limit_days', 1) ~ " days" -%}
    {%- set lookback = "interval " ~ visitor_lookup_var_whole_number('visitor_lookup__lookback_window_hours', 0) ~ " hours" -%}
    {%- set start = "to_timestamp('" ~ start_date ~ "')" -%}
    {%- set min_ts = visitor_lookup_timestamp_literal(min_last_success) -%}
    {%- set max_ts = visitor_lookup_timestamp_literal(max_last_success) -%}
    {%- if models_in_manifest == 0 -%}
        {%- set state, name = 1, 'first run' -%}
        {%- set lower, upper = start, "least(current_timestamp(), " ~ start ~ " + " ~ backfill ~ ")" -%}
    {%- elif models_missing > 0 -%}
        {%- set state, name = 2, 'new model' -%}
        {%- set lower, upper = start, "least(" ~ max_ts ~ ", " ~ start ~ " + " ~ backfill ~ ")" -%}
    {%- elif min_last_success < max_last_success -%}
        {%- set state, name = 3, 'out of sync' -%}
        {%- set lower = min_ts ~ " - " ~ lookback -%}
        {%- set upper = "least(" ~ max_ts ~ ", " ~ min_ts ~ " + " ~ backfill ~ ")" -%}
    {%- else -%}
        {%- set state, name = 4, 'standard' -%}
        {%- set lower = max_ts ~ " - " ~ lookback -%}
        {%- set upper = "least(current_timestamp(), " ~ max_ts ~ " + " ~ backfill ~ ")" -%}
    {%- endif -%}
    {%- set sql -%}
        select
            {{ state }} as state,
            '{{ name }}' as state_name,
            {{ lower }} as lower_limit,
            {{ upper }} as upper_limit
    {%- endset -%}
    {{ return(sql) }}
{% endmacro %}


{% macro visitor_lookup_resolve_run_limits(manifest_relation, previous_limits=none) %}
    {#-
        Reads the manifest, computes this run's limits with get_run_limits,
        and returns them as a dict of literals; in the same statement, from
        previous_limits (the table this run is about to replace):
        files_since, when the previous run computed its limits less the
        clock-skew allowance, from which on the events files are checked
        (the epoch when there is none), and that run's number and digest of
        the events folder (visitor_lookup_skip_lookback).
    -#}
    {%- set previous = visitor_lookup_existing(previous_limits) if previous_limits is not none else none -%}
    {#- A table written by a version before the digest has none: the run reads its lookback. -#}
    {%- set previous_digest = previous is not none
        and 'listing_digest' in visitor_lookup_stored_columns(previous) -%}
    {%- set skew_minutes = visitor_lookup_var_whole_number('visitor_lookup__max_clock_skew_minutes', 0) -%}
    {%- set models = visitor_lookup_incremental_models() -%}
    {%- set status = visitor_lookup_manifest_status(manifest_relation, models) -%}
    {%- set limits_sql = get_run_limits(
        status.min_last_success,
        status.max_last_success,
        status.present | length,
        status.missing | length,
        visitor_lookup_start_date(),
    ) -%}
    {%- set query -%}
        select
            state,
            state_name,
            {{ visitor_lookup_timestamp_text('lower_limit') }} as lower_limit,
            {{ visitor_lookup_timestamp_text('upper_limit') }} as upper_limit,
            {%- if previous is none %}
            '1970-01-01 00:00:00' as files_since,
            cast(null as int) as previous_run_number,
            cast(null as bigint) as previous_listing_digest
            {%- else %}
            coalesce(
                (
                    select date_format(computed_at - interval {{ skew_minutes }} minutes, 'yyyy-MM-dd HH:mm:ss')
                    from {{ previous }}
                ),
                '1970-01-01 00:00:00'
            ) as files_since,
            (select run_number from {{ previous }}) as previous_run_number,
            {{ '(select listing_digest from ' ~ previous ~ ')' if previous_digest else 'cast(null as bigint)' }}
                as previous_listing_digest
            {%- endif %}
        from ({{ limits_sql }}) as limits
    {%- endset -%}
    {%- set row = run_query(query).rows[0] -%}
    {%- set limits = {
        'state': row['state'] | int,
        'state_name': row['state_name'],
        'lower_limit': row['lower_limit'],
        'upper_limit': row['upper_limit'],
        'min_last_success': status.min_last_success,
        'max_last_success': status.max_last_success,
        'models_in_manifest': status.present | length,
        'models_missing': status.missing,
        'run_number': status.max_last_run_number + 1,
        'confirmed_run_number': status.confirmed_run_number,
        'files_since': row['files_since'],
        'previous_run_number': row['previous_run_number'],
        'previous_listing_digest': row['previous_listing_digest'],
        'reads_lookback': true,
        'listing_digest': none,
    } -%}
    {{ return(limits) }}
{% endmacro %}


{% macro visitor_lookup_skip_lookback(limits, listing_digest) %}
    {#-
        The limits of a standard run (state 4) that finds the events folder
        as the previous run found it, when that run's every incremental
        model succeeded (its number is the confirmed one): the same digest
        of the folder's listing, so no file was added, removed or written
        again since. Every event the lookback holds was in a file that run
        read, and what it held beyond that run's range was quarantined or
        lies after last_success: the run reads only the events loaded after
        last_success (reads_lookback false), not the lookback, the events
        without loaded_at or those loaded in the future again. Other limits
        are returned as they are, with the digest kept for the next run.
    -#}
    {%- set limits = dict(limits, listing_digest=listing_digest) -%}
    {%- if limits.state != 4 or listing_digest is none or limits.previous_listing_digest != listing_digest
        or limits.previous_run_number != limits.confirmed_run_number -%}
        {{ return(limits) }}
    {%- endif -%}
    {%- set format = '%Y-%m-%d %H:%M:%S.%f' -%}
    {%- set after_last_success = modules.datetime.datetime.strptime(limits.max_last_success, format)
        + modules.datetime.timedelta(microseconds=1) -%}
    {{ return(dict(limits, lower_limit=after_last_success.strftime(format), reads_lookback=false)) }}
{% endmacro %}


{% macro visitor_lookup_log_run_limits(limits) %}
    {%- if limits.state == 1 -%}
        {%- set message = "First run: no incremental model in the manifest, starting at visitor_lookup__start_date" -%}
    {%- elif limits.state == 2 -%}
        {%- set message = "New incremental model (" ~ limits.models_missing | join(', ')
            ~ "): backfilling from visitor_lookup__start_date" -%}
    {%- elif limits.state == 3 -%}
        {%- set message = "Incremental models out of sync: catching up from " ~ limits.min_last_success -%}
    {%- else -%}
        {%- set message = "Standard incremental run" -%}
    {%- endif -%}
    {%- do log("Visitor lookup: " ~ message, info=True) -%}
    {%- if not limits.reads_lookback -%}
        {%- do log("Visitor lookup: The events folder is as run " ~ limits.previous_run_number
            ~ " found it: reading only what was loaded after " ~ limits.max_last_success
            ~ ", not the lookback again", info=True) -%}
    {%- endif -%}
    {%- do log("Visitor lookup: Processing data between " ~ limits.lower_limit ~ " and " ~ limits.upper_limit
        ~ " (loaded_at, UTC)", info=True) -%}
    {%- do log("Visitor lookup: Run number " ~ limits.run_number ~ "; every incremental model has succeeded through run "
        ~ limits.confirmed_run_number, info=True) -%}
{% endmacro %}


{% macro visitor_lookup_run_limits(limits_relation) %}
    {#-
        This run's state, limits, run numbers, the manifest's greatest
        last_success before it and whether it reads its lookback, read back
        from base_new_event_limits (pass its ref) once per invocation, for
        the models and hooks that read them.
    -#}
    {%- if not execute -%}
        {{ return({
            'state': 1, 'lower_limit': '1970-01-01 00:00:00', 'upper_limit': '1970-01-01 00:00:00',
            'run_number': 1, 'confirmed_run_number': 0, 'max_last_success': none, 'reads_lookback': true,
        }) }}
    {%- endif -%}
    {%- set key = 'run limits ' ~ limits_relation -%}
    {%- set stored = visitor_lookup_existing(limits_relation) -%}
    {%- if stored is none -%}
        {#- Compiling before the first run (dbt compile, dbt docs generate): a first run's limits. -#}
        {{ return(visitor_lookup_resolve_run_limits(visitor_lookup_model_relation('incremental_manifest'))) }}
    {%- endif -%}
    {#- Kept by the limits model in this invocation, or read once: only then are the table's columns asked. -#}
    {%- set kept = key in visitor_lookup_invocation_cache() -%}
    {%- set query -%}
        select
            state,
            {{ visitor_lookup_timestamp_text('lower_limit') }} as lower_limit,
            {{ visitor_lookup_timestamp_text('upper_limit') }} as upper_limit,
            run_number,
            confirmed_run_number,
            {{ visitor_lookup_timestamp_text('max_last_success') }} as max_last_success,
            {{ 'reads_lookback' if kept or 'reads_lookback' in visitor_lookup_stored_columns(stored) else 'true' }}
                as reads_lookback
        from {{ limits_relation }}
    {%- endset -%}
    {%- set row = visitor_lookup_fetch_once(key, query) -%}
    {{ return({
        'state': row['state'] | int,
        'lower_limit': row['lower_limit'],
        'upper_limit': row['upper_limit'],
        'run_number': row['run_number'] | int,
        'confirmed_run_number': row['confirmed_run_number'] | int,
        'max_last_success': row['max_last_success'],
        'reads_lookback': row['reads_lookback'],
    }) }}
{% endmacro %}
