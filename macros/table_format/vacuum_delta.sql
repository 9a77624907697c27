{#-
    Bounded storage on Delta: VACUUM of the kept tables after a run, on the
    cadence of visitor_lookup__snapshot_retention_days, as
    visitor_lookup_expire_old_versions dispatches it (docs/design.md, "Old
    versions").
-#}

{% macro default__expire_old_versions_delta(relations, retention_days) %}
    {#-
        VACUUM every kept table a tenth of the retention after the last time
        (with 7 days, about every 17 hours), which the manifest's property
        visitor_lookup.vacuumed_at keeps: it deletes the files the table's
        versions of the retention no longer use, and files no version refers
        to (left by failed writes) once older than it. A manifest without the
        property is given it. Returns how many tables it vacuumed.
    -#}
    {%- set manifest = visitor_lookup_existing(visitor_lookup_model_relation('incremental_manifest')) -%}
    {%- if manifest is none -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set hours = visitor_lookup_delta_retention_hours(retention_days) -%}
    {%- set now = run_started_at.replace(tzinfo=none) -%}
    {%- set vacuumed_at = namespace(value=none) -%}
    {%- for row in run_query("show tblproperties " ~ manifest).rows if row['key'] == 'visitor_lookup.vacuumed_at' -%}
        {%- set vacuumed_at.value = modules.datetime.datetime.strptime(row['value'], '%Y-%m-%dT%H:%M:%S') -%}
    {%- endfor -%}
    {%- set due = vacuumed_at.value is not none and (now - vacuumed_at.value).total_seconds() >= hours * 360 -%}
    {%- if vacuumed_at.value is none or due -%}
        {#-
            Set first, just after the lock's release: the run that takes the
            lock next merges into the manifest only at its end, so this
            metadata change does not fail that merge. A statement, not
            run_query: Spark 3.5's Thrift Server gives DDL no result to fetch.
        -#}
        {%- call statement('visitor_lookup_stamp_vacuum') -%}
            alter table {{ manifest }} set tblproperties ('visitor_lookup.vacuumed_at' = '{{ now.strftime('%Y-%m-%dT%H:%M:%S') }}')
        {%- endcall -%}
    {%- endif -%}
    {%- if not due -%}
        {{ return(0) }}
    {%- endif -%}
    {%- for relation in relations -%}
        {%- set started_at = modules.datetime.datetime.now() -%}
        {%- call statement('visitor_lookup_vacuum') -%}
            vacuum {{ relation }} retain {{ hours }} hours
        {%- endcall -%}
        {%- do log(
            "Visitor lookup: vacuumed " ~ relation ~ ", retaining " ~ hours ~ " hours: "
            ~ ((modules.datetime.datetime.now() - started_at).total_seconds() | round(1)) ~ " s",
            info=True,
        ) -%}
    {%- endfor -%}
    {{ return(relations | length) }}
{% endmacro %}


{% macro visitor_lookup_delta_retention_hours(retention_days) %}
    {#-
        The retention in whole hours for Delta's VACUUM, which refuses less
        than a table's delta.deletedFileRetentionDuration (7 days) while its
        check is on: the var's, unless that is shorter and the check on.
    -#}
    {%- set hours = (retention_days * 24) | round | int -%}
    {%- if hours < 168 and adapter.dispatch('delta_retention_check_on', 'visitor_lookup')() -%}
        {{ return(168) }}
    {%- endif -%}
    {{ return(hours) }}
{% endmacro %}


{% macro default__delta_retention_check_on() %}
    {#- Spark's SET with a key alone answers the session's value. -#}
    {%- set row = run_query("set spark.databricks.delta.retentionDurationCheck.enabled").rows[0] -%}
    {{ return(row['value'] != 'false') }}
{% endmacro %}


{% macro databricks__delta_retention_check_on() %}
    {#- Databricks' SQL warehouses refuse to set Spark's settings: the check is on, Delta's default. -#}
    {{ return(true) }}
{% endmacro %}
