{#-
    Bounded storage. Every merge, append and compaction leaves the table's
    previous version readable (Iceberg snapshots, Delta versions), and its
    files on disk: without expiry the warehouse grows with every run, and the
    files of rows a run replaced stay readable for ever. The last on-run-end
    hook (visitor_lookup_record_run), after the run lock is released, expires the Iceberg snapshots older
    than visitor_lookup__snapshot_retention_days of every table the project
    keeps, and removes the files no snapshot refers to, or runs Delta's VACUUM
    (docs/design.md, "Old versions").
-#}

{% macro visitor_lookup_snapshot_retention_days() %}
    {#- The var as a number of days, or none when it is 'off'. -#}
    {%- set value = var('visitor_lookup__snapshot_retention_days') -%}
    {%- set text = value | string | trim | lower -%}
    {%- if text == 'off' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if value is boolean or not modules.re.fullmatch('[0-9]+([.][0-9]+)?', text) -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__snapshot_retention_days must be a number of days >= 0 "
            ~ "(0 keeps only each table's current version) or 'off' (keep every version), got '"
            ~ value ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(text | float) }}
{% endmacro %}


{% macro visitor_lookup_kept_relations() %}
    {#-
        The tables that outlive a run and exist: the incremental models'
        (the manifest, processed and quarantined events, the lookup tables)
        and the hooks' run_lock and visitor_lookup_runs. The per-run scratch
        tables are dropped and rebuilt.
    -#}
    {%- set relations = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.package_name == 'visitor_lookup'
        and node.config.materialized == 'action_merge' -%}
        {%- do relations.append(visitor_lookup_model_relation(node.name)) -%}
    {%- endfor -%}
    {%- do relations.append(visitor_lookup_run_lock_relation()) -%}
    {%- do relations.append(visitor_lookup_runs_relation()) -%}
    {%- set existing = [] -%}
    {%- for relation in relations -%}
        {%- set found = visitor_lookup_existing(relation) -%}
        {%- if found is not none -%}
            {%- do existing.append(found) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(existing) }}
{% endmacro %}


{% macro visitor_lookup_expire_old_versions() %}
    {#-
        After a run, from visitor_lookup_record_run: expire the kept tables'
        old versions (dispatched per table format: adapter and format,
        `<adapter>__expire_old_versions_<format>`). Returns how many
        snapshots it expired (Iceberg) or tables it vacuumed (Delta), or
        none with retention 'off'.
    -#}
    {%- set retention_days = visitor_lookup_snapshot_retention_days() -%}
    {%- if retention_days is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set relations = visitor_lookup_kept_relations() -%}
    {%- if not relations -%}
        {{ return(0) }}
    {%- endif -%}
    {%- if visitor_lookup_is_delta_target() -%}
        {{ return(adapter.dispatch('expire_old_versions_delta', 'visitor_lookup')(relations, retention_days)) }}
    {%- endif -%}
    {{ return(adapter.dispatch('expire_old_versions_iceberg', 'visitor_lookup')(relations, retention_days)) }}
{% endmacro %}


{% macro default__expire_old_versions_iceberg(relations, retention_days) %}
    {#-
        A table is expired when it holds a snapshot, other than its newest,
        older than the retention by more than a tenth of it: with the default
        of 7 days, about once every 17 hours rather than on every run (0: on
        every run). Every run writes the manifest, so its oldest snapshot is
        at least as old as any other table's since they were last expired:
        one look at its snapshots, taken with the run's start facts
        (visitor_lookup_start_facts), tells whether any table is due. Then, per
        table due: expire_snapshots drops the snapshots older than the
        retention (the current one always stays) and deletes the files only
        they used; remove_orphan_files deletes the files no snapshot refers
        to (left by failed writes, and metadata files older than the table's
        metadata log) once they are older than the retention and a day:
        Iceberg refuses less, since a write still under way has files no
        snapshot refers to yet.
    -#}
    {%- if visitor_lookup_start_facts()['manifest_snapshots_due'] == 0 -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set total = namespace(expired=0) -%}
    {%- set ages = [] -%}
    {%- for relation in relations -%}
        {%- do ages.append(visitor_lookup_snapshot_ages(relation, retention_days)) -%}
    {%- endfor -%}
    {%- for table in run_query(ages | join('\nunion all\n')).rows if table['due'] > 0 -%}
        {%- set started_at = modules.datetime.datetime.now() -%}
        {%- set name = table['relation_name'] -%}
        {%- set expired = run_query(
            "call spark_catalog.system.expire_snapshots(table => '" ~ name ~ "', older_than => timestamp '"
            ~ table['cutoff'] ~ "', retain_last => 1)"
        ).rows[0] -%}
        {%- set orphans = run_query(
            "call spark_catalog.system.remove_orphan_files(table => '" ~ name ~ "', older_than => timestamp '"
            ~ table['orphan_cutoff'] ~ "')"
        ).rows | length -%}
        {%- set total.expired = total.expired + table['expired'] -%}
        {%- set delete_files = expired['deleted_position_delete_files_count']
            + expired['deleted_equality_delete_files_count'] -%}
        {%- do log(
            "Visitor lookup: expired " ~ table['expired'] ~ " snapshots of " ~ name ~ " older than "
            ~ table['cutoff'][:19] ~ " UTC: deleted " ~ expired['deleted_data_files_count'] ~ " data files, "
            ~ delete_files ~ " delete files, " ~ expired['deleted_manifest_files_count'] ~ " manifests and "
            ~ expired['deleted_manifest_lists_count'] ~ " manifest lists; removed " ~ orphans
            ~ " orphan files; " ~ ((modules.datetime.datetime.now() - started_at).total_seconds() | round(1)) ~ " s",
            info=True,
        ) -%}
    {%- endfor -%}
    {{ return(total.expired) }}
{% endmacro %}


{% macro visitor_lookup_snapshot_ages(relation, retention_days) %}
    {#-
        One row for an Iceberg table: how many of its snapshots, other than
        its newest, are older than the retention (expired) and than the
        retention and a tenth (due), and the cutoffs for expiry and for
        orphan files as timestamp text.
    -#}
    {%- set retention_seconds = (retention_days * 86400) | round | int -%}
    {%- set due_seconds = (retention_days * 1.1 * 86400) | round | int -%}
    {%- set query -%}
        select
            '{{ relation }}' as relation_name,
            count_if(committed_at < newest and committed_at < cutoff) as expired,
            count_if(committed_at < newest and committed_at < due) as due,
            cast(min(cutoff) as string) as cutoff,
            cast(min(least(cutoff, orphan_cutoff)) as string) as orphan_cutoff
        from (
            select
                committed_at,
                (select max(committed_at) from {{ relation }}.snapshots) as newest,
                timestampadd(second, -{{ retention_seconds }}, current_timestamp()) as cutoff,
                timestampadd(second, -{{ due_seconds }}, current_timestamp()) as due,
                timestampadd(hour, -24, current_timestamp()) as orphan_cutoff
            from {{ relation }}.snapshots
        ) as snapshot_ages
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}
