{#-
    One run at a time: a dbt run or build holds the project's run lock from
    its on-run-start to its on-run-end. Two runs that overlapped would read
    the same window and both append its events to processed_events. The
    lock is one row of the table run_lock, taken by a MERGE that writes it
    only when no row is there or the row's lock has expired (a run killed
    before its on-run-end holds the lock until then); the table format's
    commit check makes one of two simultaneous MERGEs fail.
-#}

{% macro visitor_lookup_run_lock_relation() %}
    {{ return(visitor_lookup_relation_beside_manifest('run_lock')) }}
{% endmacro %}


{% macro visitor_lookup_run_lock_needed() %}
    {#-
        Whether this invocation takes the lock: a run, build or retry (dbt
        test and docs write nothing), unless its Spark says (the profile's setting
        spark.visitor_lookup.single_process_metastore, on the embedded
        targets) that one process at a time can open its metastore, so no
        other run can reach the tables while this one runs.
    -#}
    {%- if not execute or flags.WHICH not in ['run', 'build', 'retry'] -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if target.type == 'spark' -%}
        {%- set setting = run_query('set spark.visitor_lookup.single_process_metastore').rows[0][1] -%}
        {{ return(setting != 'true') }}
    {%- endif -%}
    {{ return(true) }}
{% endmacro %}


{% macro visitor_lookup_take_run_lock() %}
    {#-
        on-run-start: take the run lock, waiting up to
        visitor_lookup__lock_wait_seconds for another run to release it; stop
        the run, before any model, when it stays held.
    -#}
    {%- set expiry_minutes = visitor_lookup_var_whole_number('visitor_lookup__lock_expiry_minutes', 1) -%}
    {%- set wait_seconds = visitor_lookup_var_whole_number('visitor_lookup__lock_wait_seconds', 0) -%}
    {%- if not visitor_lookup_run_lock_needed() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lock = visitor_lookup_run_lock_relation() -%}
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
    {%- set poll_seconds = 10 -%}
    {%- set attempts = ((wait_seconds + poll_seconds - 1) // poll_seconds) + 1 -%}
    {%- set state = namespace(held=visitor_lookup_run_lock_holder(lock)) -%}
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
                        current_timestamp() + interval {{ expiry_minutes }} minutes as expires_at
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
            ~ "visitor_lookup__lock_wait_seconds to wait for it. A run killed before its end keeps the "
            ~ "lock until it expires (visitor_lookup__lock_expiry_minutes)."
        ) }}
    {%- endif -%}
    {%- do log("Visitor lookup: run lock taken until " ~ state.held['expires_at'] ~ " UTC", info=True) -%}
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


{% macro visitor_lookup_release_run_lock() %}
    {#- on-run-end: release the lock this invocation holds, whatever became of its models. -#}
    {%- if not visitor_lookup_run_lock_needed() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lock = visitor_lookup_run_lock_relation() -%}
    {%- call statement('visitor_lookup_release_run_lock') -%}
        delete from {{ lock }} where holder = '{{ invocation_id }}'
    {%- endcall -%}
    {%- do log("Visitor lookup: run lock released", info=True) -%}
    {{ return('') }}
{% endmacro %}
