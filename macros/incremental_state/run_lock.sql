{#-
    One run at a time: a dbt run or build holds the project's run lock from
    its on-run-start to its on-run-end. Two runs that overlapped would read
    the same window and both append its events to processed_events. The
    lock is one row of the table run_lock, taken by a MERGE that writes it
    only when no row is there or the row's lock has expired (a run killed
    before its on-run-end holds it until its lease lapses); the table
    format's commit check makes one of two simultaneous MERGEs fail. The
    holder renews the lease as it runs (visitor_lookup_renew_run_lock).
-#}

{% macro visitor_lookup_run_lock_relation() %}
    {{ return(visitor_lookup_relation_beside_manifest('run_lock')) }}
{% endmacro %}


{% macro visitor_lookup_run_lock_needed() %}
    {#-
        Whether this invocation takes the lock: one that changes the
        project's state (visitor_lookup_changes_state), unless its Spark says
        (the profile's setting spark.visitor_lookup.single_process_metastore,
        on the embedded targets) that one process at a time can open its
        metastore, so no other run can reach the tables while this one runs.
        Asked once per invocation.
    -#}
    {%- if not visitor_lookup_changes_state() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- if 'run_lock_needed' not in cache -%}
        {%- do cache.update({'run_lock_needed': not visitor_lookup_session_settings()['single_process_metastore']}) -%}
    {%- endif -%}
    {{ return(cache['run_lock_needed']) }}
{% endmacro %}


{% macro visitor_lookup_take_run_lock() %}
    {#-
        on-run-start: take the run lock, waiting up to
        visitor_lookup__lock_wait_seconds for another run to release it; stop
        the run, before any model, when it stays held. A lock whose lease
        has lapsed belongs to a run that stopped without releasing it: it is
        taken over, and the log says so.
    -#}
    {%- set lease_minutes = visitor_lookup_var_whole_number('visitor_lookup__lock_lease_minutes', 1) -%}
    {%- set wait_seconds = visitor_lookup_var_whole_number('visitor_lookup__lock_wait_seconds', 0) -%}
    {%- if not visitor_lookup_run_lock_needed() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lock = visitor_lookup_run_lock_relation() -%}
    {%- if visitor_lookup_existing(lock) is none -%}
        {#- A run killed while it created the table can have left its folder, which Delta refuses to create over. -#}
        {%- if visitor_lookup_table_format() != 'iceberg' -%}
            {%- do visitor_lookup_clear_absent_tables_folders([lock]) -%}
        {%- endif -%}
        {%- call statement('visitor_lookup_create_run_lock') -%}
            create table if not exists {{ lock }} (
                lock_name string,
                holder string,
                command string,
                taken_at timestamp,
                expires_at timestamp
            )
            {{ visitor_lookup_kept_table_options() }}
        {%- endcall -%}
    {%- endif -%}
    {%- set poll_seconds = 10 -%}
    {%- set attempts = ((wait_seconds + poll_seconds - 1) // poll_seconds) + 1 -%}
    {%- set state = namespace(held=visitor_lookup_run_lock_holder(lock), lapsed=none) -%}
    {%- for attempt in range(attempts) if state.held is none or state.held['holder'] != invocation_id -%}
        {%- if attempt > 0 -%}
            {%- do log("Visitor lookup: waiting for the run lock, held by "
                ~ visitor_lookup_describe_holder(state.held), info=True) -%}
            {%- set pause -%}
                select reflect('java.lang.Thread', 'sleep', cast({{ poll_seconds * 1000 }} as bigint)) as slept
            {%- endset -%}
            {%- do run_query(pause) -%}
            {#- A session keeps the table as it first read it (Iceberg's catalog cache). -#}
            {%- call statement('visitor_lookup_refresh_run_lock') -%}
                refresh table {{ lock }}
            {%- endcall -%}
            {%- set state.held = visitor_lookup_run_lock_holder(lock) -%}
        {%- endif -%}
        {%- if state.held is none or state.held['expired'] -%}
            {%- set state.lapsed = state.held -%}
            {#-
                Written only when the lock looks free: a MERGE that changes
                nothing still rewrites the row, and two of those would
                conflict. Two runs that both find it free: the second commit
                fails (the table format's conflict check), before any model.
            -#}
            {%- call statement('visitor_lookup_take_run_lock') -%}
                merge into {{ lock }} as held
                using (
                    select
                        'run' as lock_name,
                        '{{ invocation_id }}' as holder,
                        'dbt {{ flags.WHICH }}' as command,
                        current_timestamp() as taken_at,
                        current_timestamp() + interval {{ lease_minutes }} minutes as expires_at
                ) as wanted
                on held.lock_name = wanted.lock_name
                when matched and held.expires_at < current_timestamp() then update set
                    held.holder = wanted.holder,
                    held.command = wanted.command,
                    held.taken_at = wanted.taken_at,
                    held.expires_at = wanted.expires_at
                when not matched then insert (lock_name, holder, command, taken_at, expires_at)
                    values (wanted.lock_name, wanted.holder, wanted.command, wanted.taken_at, wanted.expires_at)
            {%- endcall -%}
            {%- set state.held = visitor_lookup_run_lock_holder(lock) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if state.held['holder'] != invocation_id -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: another run holds the run lock (" ~ visitor_lookup_describe_holder(state.held)
            ~ "); this run stopped before changing anything. Run again when it has finished, or set "
            ~ "visitor_lookup__lock_wait_seconds to wait for it. A run that stopped without releasing it "
            ~ "keeps it until its lease lapses (visitor_lookup__lock_lease_minutes after its last renewal); "
            ~ "to release it by hand: dbt run-operation visitor_lookup_release_run_lock."
        ) }}
    {%- endif -%}
    {%- if state.lapsed is not none -%}
        {%- do log("Visitor lookup: took over the run lock from " ~ visitor_lookup_describe_holder(state.lapsed)
            ~ ": its lease lapsed, so that run stopped without releasing it", info=True) -%}
    {%- endif -%}
    {%- do visitor_lookup_invocation_cache().update({'run_lock_renewed_at': modules.datetime.datetime.now()}) -%}
    {%- do log("Visitor lookup: run lock taken; its lease lasts until " ~ state.held['expires_at']
        ~ " UTC and is renewed as the run goes", info=True) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_renew_run_lock() %}
    {#-
        Before each of the project's models (their pre-hook): renew the lease
        once a third of it has passed since the last renewal, so that a lock
        lapses soon after its holder stops, and check that this run still
        holds it. Nothing to do, and no statement, before that, or when the
        invocation takes no lock.
    -#}
    {%- set cache = visitor_lookup_invocation_cache() -%}
    {%- if not execute or 'run_lock_renewed_at' not in cache -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lease_minutes = visitor_lookup_var_whole_number('visitor_lookup__lock_lease_minutes', 1) -%}
    {%- set now = modules.datetime.datetime.now() -%}
    {%- if now - cache['run_lock_renewed_at'] < modules.datetime.timedelta(seconds=lease_minutes * 20) -%}
        {{ return('') }}
    {%- endif -%}
    {#- Claimed before the statement: two models starting at once would both renew, and on Delta the second
        update of run_lock fails as a concurrent append. -#}
    {%- do cache.update({'run_lock_renewed_at': now}) -%}
    {%- set lock = visitor_lookup_run_lock_relation() -%}
    {%- call statement('visitor_lookup_renew_run_lock') -%}
        update {{ lock }}
        set expires_at = current_timestamp() + interval {{ lease_minutes }} minutes
        where lock_name = 'run' and holder = '{{ invocation_id }}'
    {%- endcall -%}
    {%- set held = visitor_lookup_run_lock_holder(lock) -%}
    {%- if held is none or held['holder'] != invocation_id -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: this run lost the run lock"
            ~ (" to " ~ visitor_lookup_describe_holder(held) if held is not none else "")
            ~ ": its lease lapsed while a model ran longer than visitor_lookup__lock_lease_minutes ("
            ~ lease_minutes ~ "). Raise that var above the longest model's time; the next run repairs "
            ~ "what this one left unfinished."
        ) }}
    {%- endif -%}
    {%- do log("Visitor lookup: run lock renewed until " ~ held['expires_at'] ~ " UTC", info=True) -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_run_lock_holder(lock) %}
    {#- The lock's row (holder, command, taken_at, expires_at as text, expired), or none when free. -#}
    {%- set query -%}
        select
            holder,
            command,
            {{ visitor_lookup_timestamp_text('taken_at') }} as taken_at,
            {{ visitor_lookup_timestamp_text('expires_at') }} as expires_at,
            expires_at < current_timestamp() as expired
        from {{ lock }}
        where lock_name = 'run'
    {%- endset -%}
    {%- set rows = run_query(query).rows -%}
    {{ return(rows[0] if rows else none) }}
{% endmacro %}


{% macro visitor_lookup_describe_holder(held) %}
    {{ return(held['command'] ~ ' ' ~ held['holder'] ~ ', since ' ~ held['taken_at'] ~ ' UTC, expires '
        ~ held['expires_at'] ~ ' UTC') }}
{% endmacro %}


{% macro visitor_lookup_release_run_lock(holder=none) %}
    {#-
        on-run-end: release the lock this invocation holds, whatever became
        of its models. By hand, for a lock whose holder is known to have
        stopped: dbt run-operation visitor_lookup_release_run_lock releases
        the lock whoever holds it, and with --args '{holder: <invocation id>}'
        only that holder's.
    -#}
    {%- if execute and flags.WHICH == 'run-operation' -%}
        {%- set lock = visitor_lookup_existing(visitor_lookup_run_lock_relation()) -%}
        {%- set held = visitor_lookup_run_lock_holder(lock) if lock is not none else none -%}
        {%- if held is none or (holder is not none and held['holder'] != holder) -%}
            {%- do log("Visitor lookup: the run lock is not held"
                ~ (" by " ~ holder if holder is not none else "") ~ "; nothing released", info=True) -%}
            {{ return('') }}
        {%- endif -%}
        {%- call statement('visitor_lookup_release_run_lock') -%}
            delete from {{ lock }} where lock_name = 'run' and holder = '{{ held['holder'] }}'
        {%- endcall -%}
        {%- do log("Visitor lookup: released the run lock of " ~ visitor_lookup_describe_holder(held), info=True) -%}
        {{ return('') }}
    {%- endif -%}
    {%- if 'run_lock_renewed_at' not in visitor_lookup_invocation_cache() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lock = visitor_lookup_run_lock_relation() -%}
    {%- call statement('visitor_lookup_release_run_lock') -%}
        delete from {{ lock }} where holder = '{{ invocation_id }}'
    {%- endcall -%}
    {%- do log("Visitor lookup: run lock released", info=True) -%}
    {{ return('') }}
{% endmacro %}
