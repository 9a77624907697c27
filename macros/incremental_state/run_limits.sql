{#-
    The four states of the incremental set and the loaded_at range each run
    reads (spec §5), Snowplow-style. Every bound is computed once from the
    manifest and the run's start as Spark's clock gives it, logged, and
    stored in base_new_event_limits, which the window reads.
-#}

{% macro get_run_limits(
    min_last_success, max_last_success, models_in_manifest, models_missing, start_date, now, read_again_from=none
) %}
    {#-
        One row (state, state_name, lower_limit, upper_limit, as timestamp
        text) from what the manifest says of the enabled tagged models:
          1 first run      nothing in the manifest
          2 new model      some enabled model missing from the manifest
          3 out of sync    min_last_success < max_last_success
          4 standard       otherwise
        In state 3 or 4 the lower limit is at most read_again_from
        (visitor_lookup__read_again_from), when given. Computed here from
        the run's start: no statement.
    -#}
    {%- set backfill = modules.datetime.timedelta(
        days=visitor_lookup_var_whole_number('visitor_lookup__backfill_limit_days', 1)) -%}
    {%- set lookback = modules.datetime.timedelta(
        hours=visitor_lookup_var_whole_number('visitor_lookup__lookback_window_hours', 0)) -%}
    {%- set start = visitor_lookup_parse_timestamp(start_date) -%}
    {%- set now = visitor_lookup_parse_timestamp(now) -%}
    {%- set min_ts = visitor_lookup_parse_timestamp(min_last_success) -%}
    {%- set max_ts = visitor_lookup_parse_timestamp(max_last_success) -%}
    {%- if models_in_manifest == 0 -%}
        {%- set state, name, lower, upper = 1, 'first run', start, [now, start + backfill] | min -%}
    {%- elif models_missing > 0 -%}
        {%- set state, name, lower, upper = 2, 'new model', start, [max_ts, start + backfill] | min -%}
    {%- elif min_ts < max_ts -%}
        {%- set state, name, lower, upper = 3, 'out of sync', min_ts - lookback, [max_ts, min_ts + backfill] | min -%}
    {%- else -%}
        {%- set state, name, lower, upper = 4, 'standard', max_ts - lookback, [now, max_ts + backfill] | min -%}
    {%- endif -%}
    {%- if state >= 3 and read_again_from is not none -%}
        {%- set lower = [lower, visitor_lookup_parse_timestamp(read_again_from)] | min -%}
    {%- endif -%}
    {{ return({
        'state': state,
        'state_name': name,
        'lower_limit': visitor_lookup_format_timestamp(lower),
        'upper_limit': visitor_lookup_format_timestamp(upper),
    }) }}
{% endmacro %}


{% macro visitor_lookup_resolve_run_limits(manifest_relation, previous_limits=none) %}
    {#-
        This run's limits (get_run_limits) from the manifest, as a dict of
        timestamp text, with the run numbers and, from previous_limits (the
        table this run is about to replace): files_since, when the previous
        run computed its limits less the clock-skew allowance, from which on
        the events files are checked (the epoch when there is none), and that
        run's number, digest of the events folder and the latest
        modification time in it (visitor_lookup_skip_lookback), and
        new_files_after: the files modified after it are new since the last
        run that completed, so this run reads them whole (none: every file).
        The run's start and the previous limits come with the start facts
        where no other run can change them first (an embedded metastore
        needs no run lock); otherwise one statement reads them once this run
        holds the lock.
    -#}
    {%- set previous = visitor_lookup_existing(previous_limits) if previous_limits is not none else none -%}
    {%- set facts = visitor_lookup_start_facts() -%}
    {%- if not visitor_lookup_run_lock_needed() -%}
        {%- set inputs = {'now': facts['started_at'], 'previous': facts['previous_limits'] if previous is not none} -%}
    {%- else -%}
        {%- set query -%}
            select
                {{ visitor_lookup_timestamp_text('current_timestamp()') }} as now,
                {{ visitor_lookup_previous_limits(previous) if previous is not none else 'cast(null as string)' }}
                    as previous
        {%- endset -%}
        {%- set row = run_query(query).rows[0] -%}
        {%- set inputs = {'now': row['now'], 'previous': row['previous']} -%}
    {%- endif -%}
    {%- set previous_row = fromjson(inputs.previous) if inputs.previous else {} -%}
    {%- set status = visitor_lookup_manifest_status(manifest_relation, visitor_lookup_incremental_models()) -%}
    {%- set read_again_from = visitor_lookup_read_again_from() -%}
    {%- set limits = get_run_limits(
        status.min_last_success,
        status.max_last_success,
        status.present | length,
        status.missing | length,
        visitor_lookup_start_date(),
        inputs.now,
        read_again_from,
    ) -%}
    {%- set files_since = previous_row.get('files_since') or '1970-01-01 00:00:00.000000' -%}
    {#-
        The previous run completed: what it listed was read, the files up to its latest time whole or in
        its range; when it listed no file, every file is new. Otherwise it is not known to have been
        read: what that run took as new still is.
    -#}
    {%- if not previous_row or limits.state <= 2 -%}
        {%- set new_files_after = none -%}
    {%- elif previous_row.get('run_number') == status.confirmed_run_number -%}
        {%- set listed_none = previous_row.get('listing_files') == 0 -%}
        {%- set new_files_after = previous_row.get('listing_last_modified') or (none if listed_none else files_since) -%}
    {%- else -%}
        {%- set new_files_after = previous_row.get('new_files_after') -%}
    {%- endif -%}
    {{ return(dict(limits,
        min_last_success=status.min_last_success,
        max_last_success=status.max_last_success,
        models_in_manifest=status.present | length,
        models_missing=status.missing,
        run_number=status.max_last_run_number + 1,
        confirmed_run_number=status.confirmed_run_number,
        computed_at=inputs.now,
        files_since=files_since,
        previous_run_number=previous_row.get('run_number'),
        previous_listing_digest=previous_row.get('listing_digest'),
        previous_listing_last_modified=previous_row.get('listing_last_modified'),
        previous_listing_files=previous_row.get('listing_files'),
        read_again_from=read_again_from if limits.state >= 3 else none,
        reads_lookback=true,
        new_files_after=new_files_after,
        new_files=none,
        listing_digest=none,
        listing_last_modified=none,
        listing_files=none,
    )) }}
{% endmacro %}


{% macro visitor_lookup_previous_limits(previous) %}
    {#-
        A scalar subquery: the previous run's limits row (base_new_event_limits
        before this run replaces it) as JSON, with files_since (when it
        computed its limits, less the clock-skew allowance), run_number,
        listing_digest, listing_last_modified, listing_files and
        new_files_after.
    -#}
    {%- set skew_minutes = visitor_lookup_var_whole_number('visitor_lookup__max_clock_skew_minutes', 0) -%}
    {%- set query -%}
        (
            select to_json(named_struct(
                'files_since', {{ visitor_lookup_timestamp_text('computed_at - interval ' ~ skew_minutes ~ ' minutes') }},
                'run_number', run_number,
                'listing_digest', listing_digest,
                'listing_last_modified', {{ visitor_lookup_timestamp_text('listing_last_modified') }},
                'listing_files', listing_files,
                'new_files_after', {{ visitor_lookup_timestamp_text('new_files_after') }}
            ))
            from {{ previous }}
        )
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}


{% macro visitor_lookup_skip_lookback(limits, listing) %}
    {#-
        The limits with what the listing of the events folder says, for this
        run and the next: its digest, latest modification time and count of
        files, and how many files are new (modified after new_files_after),
        which the run reads whole (visitor_lookup_recent_event_files).
        A standard run (state 4) whose previous run's every incremental
        model succeeded (its number is the confirmed one), and that finds
        every file that run listed as it was (the files modified up to that
        listing's latest time give its digest again: none removed, written
        again or added with an old time), needs no lookback: that run read
        every event of those files up to last_success, and the files added
        since are read whole. Its lower limit moves to just after
        last_success (reads_lookback false). Other limits keep theirs.
    -#}
    {%- if listing is none -%}
        {{ return(limits) }}
    {%- endif -%}
    {%- set limits = dict(limits,
        listing_digest=listing.digest,
        listing_last_modified=listing.last_modified,
        listing_files=listing.files,
        new_files=listing.new_files) -%}
    {%- set unchanged = listing.digest_through_previous == limits.previous_listing_digest -%}
    {%- if limits.state == 4 and limits.read_again_from is none and listing.digest is not none and unchanged
        and limits.previous_run_number == limits.confirmed_run_number -%}
        {%- set after_last_success = visitor_lookup_parse_timestamp(limits.max_last_success)
            + modules.datetime.timedelta(microseconds=1) -%}
        {{ return(dict(limits, lower_limit=visitor_lookup_format_timestamp(after_last_success), reads_lookback=false)) }}
    {%- endif -%}
    {%- if limits.state >= 3 and limits.previous_listing_digest is not none and not unchanged
        and listing.files_through_previous >= (limits.previous_listing_files or 0) -%}
        {#- Not only files removed: one written or added with an older time is read in the range only. -#}
        {%- do exceptions.warn(
            "Visitor lookup: files modified before " ~ limits.previous_listing_last_modified ~ " changed since run "
            ~ limits.previous_run_number ~ " listed the events folder, not only by removal: a file written or "
            ~ "added with an older modification time is read only from " ~ limits.lower_limit ~ " (the lookback). "
            ~ "To read what such a file holds from earlier, run once with "
            ~ "--vars '{visitor_lookup__read_again_from: \"<its first loaded_at>\"}'."
        ) -%}
    {%- endif -%}
    {{ return(limits) }}
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
    {%- if limits.read_again_from is not none -%}
        {%- do log("Visitor lookup: reading again what was loaded from " ~ limits.read_again_from
            ~ " (visitor_lookup__read_again_from)", info=True) -%}
    {%- endif -%}
    {%- set new_files = limits.new_files ~ " events file(s) " ~ ("written after " ~ limits.new_files_after
        if limits.new_files_after else "new (none was listed before)") -%}
    {%- if not limits.reads_lookback and not limits.new_files -%}
        {%- do log("Visitor lookup: The events folder is as run " ~ limits.previous_run_number
            ~ " found it: reading only what was loaded after " ~ limits.max_last_success
            ~ ", not the lookback again", info=True) -%}
    {%- elif not limits.reads_lookback -%}
        {%- do log("Visitor lookup: The events folder is as run " ~ limits.previous_run_number ~ " found it but for "
            ~ new_files ~ ": reading those whole, and what was loaded after " ~ limits.max_last_success
            ~ " in every file", info=True) -%}
    {%- elif limits.new_files and limits.state >= 3 -%}
        {%- do log("Visitor lookup: " ~ new_files ~ " since the last run that completed: reading each whole",
            info=True) -%}
    {%- endif -%}
    {%- do log("Visitor lookup: Processing data between " ~ limits.lower_limit ~ " and " ~ limits.upper_limit
        ~ " (loaded_at, UTC)", info=True) -%}
    {%- do log("Visitor lookup: Run number " ~ limits.run_number ~ "; every incremental model has succeeded through run "
        ~ limits.confirmed_run_number, info=True) -%}
{% endmacro %}


{% macro visitor_lookup_run_limits(limits_relation) %}
    {#-
        This run's state, limits, run numbers, the manifest's greatest
        last_success before it, whether it reads its lookback, and the new
        events files it reads whole (how many, modified after when), read back
        from base_new_event_limits (pass its ref) once per invocation, for
        the models and hooks that read them.
    -#}
    {%- if not execute -%}
        {{ return({
            'state': 1, 'lower_limit': '1970-01-01 00:00:00', 'upper_limit': '1970-01-01 00:00:00',
            'run_number': 1, 'confirmed_run_number': 0, 'max_last_success': none, 'reads_lookback': true,
            'new_files_after': none, 'new_files': none,
        }) }}
    {%- endif -%}
    {%- set key = 'run limits ' ~ limits_relation -%}
    {%- set stored = visitor_lookup_existing(limits_relation) -%}
    {%- if stored is none -%}
        {#- Compiling before the first run (dbt compile, dbt docs generate): a first run's limits. -#}
        {{ return(visitor_lookup_resolve_run_limits(visitor_lookup_model_relation('incremental_manifest'))) }}
    {%- endif -%}
    {%- set query -%}
        select
            state,
            {{ visitor_lookup_timestamp_text('lower_limit') }} as lower_limit,
            {{ visitor_lookup_timestamp_text('upper_limit') }} as upper_limit,
            run_number,
            confirmed_run_number,
            {{ visitor_lookup_timestamp_text('max_last_success') }} as max_last_success,
            reads_lookback,
            {{ visitor_lookup_timestamp_text('new_files_after') }} as new_files_after,
            new_files
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
        'new_files_after': row['new_files_after'],
        'new_files': row['new_files'],
    }) }}
{% endmacro %}
