{#-
    on-run-start guards: what an invocation must not do to the incremental
    set, refused before any model runs.
-#}

{% macro visitor_lookup_guard_full_refresh() %}
    {#-
        Snowplow-style: a --full-refresh that selects the manifest or a model
        of the incremental set drops what those tables hold (every processed
        event, the quarantine, the lookup history) and reads it all again
        from the raw events, which a team may no longer keep in full.
        Refused unless the var visitor_lookup__allow_refresh is true; a full
        refresh of any other model (base_new_event_limits, say) goes ahead.
    -#}
    {%- set allowed = visitor_lookup_var_boolean('visitor_lookup__allow_refresh') -%}
    {%- if not execute or not flags.FULL_REFRESH or allowed -%}
        {{ return('') }}
    {%- endif -%}
    {%- set refreshed = [] -%}
    {%- for name in visitor_lookup_incremental_models() + ['incremental_manifest']
        if visitor_lookup_selected(name) -%}
        {%- do refreshed.append('the manifest' if name == 'incremental_manifest' else name) -%}
    {%- endfor -%}
    {%- if refreshed -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: --full-refresh would drop and rebuild " ~ refreshed | join(', ')
            ~ " from the raw events. If every raw event since visitor_lookup__start_date is still "
            ~ "there, run again with --vars '{\"visitor_lookup__allow_refresh\": true}'."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_guard_vanished_tables() %}
    {#-
        A table that keeps state and has vanished would be created anew by
        dbt from this run's window alone, silently dropping its history. Stop
        instead when one is missing although the manifest says the
        incremental set has run: the manifest's models that have succeeded,
        and the manifest and erasure records beside them. Costs nothing
        while every table is there; otherwise the metastore is asked once
        whether dbt's listing was right (a metastore error makes dbt-spark
        list an empty schema), then the manifest is read.
    -#}
    {%- if not visitor_lookup_changes_state()
        or (flags.FULL_REFRESH and visitor_lookup_var_boolean('visitor_lookup__allow_refresh')) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set absent = {} -%}
    {%- for name in visitor_lookup_state_models() -%}
        {%- set relation = visitor_lookup_model_relation(name) -%}
        {%- if visitor_lookup_existing(relation) is none -%}
            {%- do absent.update({name: relation}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not absent -%}
        {{ return('') }}
    {%- endif -%}
    {%- do visitor_lookup_confirm_absent(absent.values() | list) -%}
    {%- set models = visitor_lookup_incremental_models() -%}
    {%- set status = visitor_lookup_manifest_status(visitor_lookup_model_relation('incremental_manifest'), models) -%}
    {%- set vanished = [] -%}
    {%- if status.present -%}
        {%- for name, relation in absent.items() if name in status.present or name not in models -%}
            {%- do vanished.append(relation) -%}
        {%- endfor -%}
    {%- elif 'incremental_manifest' in absent and absent | length < visitor_lookup_state_models() | length -%}
        {%- do vanished.append(absent['incremental_manifest']) -%}
    {%- endif -%}
    {%- if vanished -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: " ~ vanished | join(', ') ~ " is missing, but the incremental set has run "
            ~ "before (its other tables are there); a new one would hold this run's window only. Nothing "
            ~ "was changed. Restore it (from a backup, or the table format's history), or rebuild every "
            ~ "table from the raw events: dbt run --full-refresh --vars '{\"visitor_lookup__allow_refresh\": true}'."
        ) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro visitor_lookup_guard_shadowed_models() %}
    {#-
        dbt writes the generic tests of a model with a one-name ref, and looks
        such a ref up in the root project first: a host model named as one of
        the package's (user_mapping, say) would be what the package's tests
        read and what dbt build runs them after. Stop, naming them, unless the
        host lets dbt search the package first (dbt's flag
        require_ref_searches_node_package_before_root). Reads only the graph.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set shadowing = [] -%}
    {%- for node in graph.nodes.values() if node.package_name == 'visitor_lookup' -%}
        {%- for id in node.depends_on.nodes
            if id.startswith('model.') and not id.startswith('model.visitor_lookup.') and id not in shadowing -%}
            {%- do shadowing.append(id) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if shadowing -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: your project's " ~ shadowing | sort | join(', ') ~ " share(s) a name with the "
            ~ "package's models, and dbt gives the package's tests yours to read. Nothing was run. Add "
            ~ "require_ref_searches_node_package_before_root: true under flags: in your dbt_project.yml, "
            ~ "so that dbt looks in the package first."
        ) }}
    {%- endif -%}
    {{ return('') }}
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


{% macro visitor_lookup_guard_table_format() %}
    {#-
        Before a run reads a table: stop when a table the project keeps is of
        the other format than the session writes (a warehouse of Iceberg
        tables run with a Delta target, as the embedded target local became
        in 0.10.0); the session's catalog would fail on it with an error that
        names neither. From dbt's listing, without a statement.
    -#}
    {%- set format = visitor_lookup_table_format() -%}
    {%- set foreign = [] -%}
    {%- for name in visitor_lookup_state_models() -%}
        {%- set existing = visitor_lookup_existing(visitor_lookup_model_relation(name)) -%}
        {#- Delta's catalog lists an Iceberg table as a Hive one, with Iceberg's property table_type. -#}
        {%- if existing is not none and (
            existing.is_iceberg or visitor_lookup_listed_property(existing, 'table_type') == 'ICEBERG'
            if format == 'delta' else existing.is_delta
        ) -%}
            {%- do foreign.append(existing) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if foreign -%}
        {%- set names = {'delta': 'Delta', 'iceberg': 'Iceberg'} -%}
        {%- set theirs = 'iceberg' if format == 'delta' else 'delta' -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: the project's tables in " ~ foreign[0].schema ~ " are " ~ names[theirs] ~ " tables ("
            ~ foreign | map(attribute='identifier') | join(', ') ~ "), but target '" ~ target.name ~ "' writes "
            ~ names[format] ~ " tables (its session catalog). Nothing was changed. Run with a target of their "
            ~ "format (on this project's own profile the embedded target local writes Delta since 0.10.0, "
            ~ "local_iceberg Iceberg: VISITOR_LOOKUP_TARGET=" ~ {'delta': 'local', 'iceberg': 'local_iceberg'}[theirs]
            ~ "), or drop the schema and run again to rebuild them in " ~ names[format] ~ " from the raw events."
        ) }}
    {%- endif -%}
{% endmacro %}
