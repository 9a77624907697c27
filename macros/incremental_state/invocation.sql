{#-
    What this dbt invocation is and does first and last: its hooks, whether
    it changes the project's state, and the facts it reads once when it
    starts (kept in invocation_cache.sql).
-#}


{% macro visitor_lookup_on_run_start() %}
    {#-
        The project's one on-run-start hook, in this order: where
        erasure_requests is (visitor_lookup_place_erasure_requests), before
        anything lists its schema; every var checked; the guards that read
        only the invocation (a host model the package's tests would read, an
        unallowed --full-refresh, models of the incremental set without the
        run's intake); the run lock taken; then
        what reads or changes what another run may be writing: the guard
        against a vanished table (it reads the manifest), the folders a
        killed run left cleared (a run that cleared them before waiting for
        the lock could delete the files of a table another run was
        creating), erasure_requests created on the first run and a request
        naming no id refused. Any of them stops the run before a model runs;
        on-run-end then releases a lock taken.
    -#}
    {%- do visitor_lookup_place_erasure_requests() -%}
    {%- do visitor_lookup_validate_vars() -%}
    {%- do visitor_lookup_guard_shadowed_models() -%}
    {%- do visitor_lookup_guard_full_refresh() -%}
    {%- do visitor_lookup_guard_selection() -%}
    {%- do visitor_lookup_take_run_lock() -%}
    {%- do visitor_lookup_guard_vanished_tables() -%}
    {%- do visitor_lookup_clear_leftover_locations() -%}
    {%- do visitor_lookup_prepare_erasure_requests() -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_finish_run(results) %}
    {#-
        The second on-run-end hook, after the manifest's: the run lock
        released first, so that a failure in what follows leaves no lock
        behind; then old versions expired and the run's row recorded
        (visitor_lookup_record_run).
    -#}
    {%- do visitor_lookup_release_run_lock() -%}
    {%- do visitor_lookup_record_run(results) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_start_facts() %}
    {#-
        What a run checks before its models, read once per invocation in one
        statement, once visitor_lookup_guard_table_format has found the
        tables it reads in the session's format: the prefix length of a
        stored key that does not follow
        visitor_lookup__partition_prefix_length (a table property dbt's
        listing shows: no statement); and, but for dbt test,
        erasure_requests' bad requests (no request_id, or neither id), its
        requests and how many are pending (not in erasure_log yet), and the
        rows erased_cookies keeps (only its own model writes it, later); on a
        run that changes state, the loaded_at of the earliest event the
        quarantine holds for a loaded_at in the future (a run whose range
        reaches it has that row to delete); the manifest's rows (visitor_lookup_manifest_status uses them where no
        other run can change the manifest before this one's lock, and no
        --full-refresh builds it anew) and, when
        it is an Iceberg table and old versions are kept for a while, how
        many of its snapshots are past the point where expiry is due
        (visitor_lookup_expire_old_versions); when the run runs the limits
        model, the previous run's limits row (visitor_lookup_previous_limits); and
        the run's start by Spark's clock (started_at). The last two and the
        manifest's rows give the run's limits without a statement of their
        own (visitor_lookup_resolve_run_limits). A table that does not exist
        yet gives none, '' or 0.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- if 'start facts' in cache -%}
        {{ return(cache['start facts']) }}
    {%- endif -%}
    {%- do visitor_lookup_guard_table_format() -%}
    {%- set first_dates = visitor_lookup_existing(visitor_lookup_model_relation('first_dates')) -%}
    {%- set listed_prefix_length = visitor_lookup_listed_property(first_dates, 'visitor_lookup.partition_prefix_length')
        if first_dates is not none else none -%}
    {%- set prefix_length = visitor_lookup_var_whole_number('visitor_lookup__partition_prefix_length', 1) -%}
    {%- set listed_prefix_differs = listed_prefix_length is not none and not flags.FULL_REFRESH
        and listed_prefix_length | int != prefix_length -%}
    {%- set requests = visitor_lookup_existing(visitor_lookup_erasure_requests_relation()) -%}
    {%- set read_requests = requests is not none and flags.WHICH != 'test' -%}
    {%- set erasure_log = visitor_lookup_existing(visitor_lookup_model_relation('erasure_log')) -%}
    {%- set erased_cookies = visitor_lookup_existing(visitor_lookup_model_relation('erased_cookies')) -%}
    {%- set count_erased_cookies = erased_cookies is not none and flags.WHICH != 'test' -%}
    {%- set quarantine = visitor_lookup_existing(visitor_lookup_model_relation('quarantined_events')) -%}
    {#- Only from a table with the columns asked for: one replaced under the run fails its own model, not this. -#}
    {%- set find_held = quarantine is not none and visitor_lookup_changes_state()
        and ['loaded_at', 'invalid_reason'] | reject('in', visitor_lookup_stored_columns(quarantine)) | list == [] -%}
    {%- set manifest = visitor_lookup_existing(visitor_lookup_model_relation('incremental_manifest')) -%}
    {%- set retention_days = visitor_lookup_snapshot_retention_days() -%}
    {#- dbt's listing of the schema has an Iceberg table's properties, table_type among them. -#}
    {%- set age_manifest = manifest is not none and visitor_lookup_listed_property(manifest, 'table_type') == 'ICEBERG'
        and retention_days is not none and visitor_lookup_changes_state() -%}
    {#- Only the limits model reads them, and only where it runs: not for a host project's own models. -#}
    {%- set previous_limits = visitor_lookup_existing(visitor_lookup_model_relation('base_new_event_limits'))
        if flags.WHICH in ['run', 'build', 'retry'] and visitor_lookup_selected('base_new_event_limits') else none -%}
    {%- set query -%}
        select
            {%- if read_requests %}
            {#- one read of the requests: the first five bad ones, how many, how many not done yet -#}
            (
                select to_json(named_struct(
                    'bad', concat_ws(', ', slice(collect_list(
                        case
                            when
                                {{ visitor_lookup_normalise_id('user_id') }} is null
                                and {{ visitor_lookup_normalise_id('visitor_cookie_id') }} is null
                                or request_id is null
                                then coalesce(request_id, 'NULL')
                        end
                    ), 1, 5)),
                    'requests', count(*),
                    {%- if erasure_log is none %}
                    'pending', count(*)
                    {%- else %}
                    'pending', count_if(request_id not in (select done.request_id from {{ erasure_log }} as done))
                    {%- endif %}
                ))
                from {{ requests }}
            ) as erasure_requests,
            {%- endif %}
            {%- if count_erased_cookies %}
            (select count(*) from {{ erased_cookies }}) as erased_cookies_kept,
            {%- endif %}
            {%- if find_held %}
            (
                select {{ visitor_lookup_timestamp_text('min(loaded_at)') }}
                from {{ quarantine }}
                where invalid_reason like 'loaded_at is more than % minutes in the future'
            ) as earliest_held,
            {%- endif %}
            {%- if manifest is not none %}
            (
                select to_json(collect_list(named_struct(
                    'model', model,
                    'last_success', {{ visitor_lookup_timestamp_text('last_success') }},
                    'last_run_number', coalesce(last_run_number, 0)
                )))
                from {{ manifest }} as manifest
                where last_success is not null
            ) as manifest_rows,
            {%- endif %}
            {%- if age_manifest %}
            {#- The newest counts too: the run's manifest update makes it an older one. -#}
            (
                select count_if(
                    committed_at < timestampadd(second, -{{ (retention_days * 1.1 * 86400) | round | int }}, current_timestamp())
                )
                from {{ manifest }}.snapshots
            ) as manifest_snapshots_due,
            {%- endif %}
            {%- if previous_limits is not none %}
            {{ visitor_lookup_previous_limits(previous_limits) }} as previous_limits,
            {%- endif %}
            {{ visitor_lookup_timestamp_text('current_timestamp()') }} as started_at
    {%- endset -%}
    {%- set row = run_query(query).rows[0] -%}
    {%- set erasure_requests = fromjson(row['erasure_requests']) if read_requests
        else {'bad': '', 'requests': 0, 'pending': 0} -%}
    {%- set facts = {
        'stored_prefix_length': listed_prefix_length | int if listed_prefix_differs else none,
        'bad_requests': erasure_requests['bad'] or '',
        'requests': erasure_requests['requests'],
        'pending_requests': erasure_requests['pending'],
        'erased_cookies_kept': row['erased_cookies_kept'] if count_erased_cookies else 0,
        'earliest_held': row['earliest_held'] if find_held else none,
        'manifest_rows': fromjson(row['manifest_rows'] or '[]') if manifest is not none else none,
        'manifest_snapshots_due': row['manifest_snapshots_due'] if age_manifest else none,
        'previous_limits': row['previous_limits'] if previous_limits is not none else none,
        'started_at': row['started_at'],
    } -%}
    {%- do cache.update({'start facts': facts}) -%}
    {{ return(facts) }}
{% endmacro %}


{% macro visitor_lookup_session_settings() %}
    {#-
        Two settings of the session, read once per invocation in one
        statement on dbt-spark: the profile's
        spark.visitor_lookup.single_process_metastore and the session
        catalog's class (spark.sql.catalog.spark_catalog). Spark's variable
        substitution puts a setting's value in place of ${name}; an unset one
        stays as written.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- if 'session settings' not in cache -%}
        {%- set settings = {'single_process_metastore': false, 'session_catalog': ''} -%}
        {%- if target.type == 'spark' -%}
            {%- set row = run_query(
                "select '${spark.visitor_lookup.single_process_metastore}' as single_process_metastore, "
                ~ "'${spark.sql.catalog.spark_catalog}' as session_catalog"
            ).rows[0] -%}
            {%- do settings.update({
                'single_process_metastore': row['single_process_metastore'] == 'true',
                'session_catalog': row['session_catalog'],
            }) -%}
        {%- endif -%}
        {%- do cache.update({'session settings': settings}) -%}
    {%- endif -%}
    {{ return(cache['session settings']) }}
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
