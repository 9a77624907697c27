{% macro action_merge_store_changes(inserted, updated, deleted) %}
    {#-
        Keep what the merge is about to change in the model's context as its
        result, for action_merge_report to add what compaction did.
    -#}
    {%- do visitor_lookup_carry(model.name, {'inserted': inserted, 'updated': updated, 'deleted': deleted}) -%}
    {%- for name in ['action_merge_changes', 'main'] -%}
        {%- do store_raw_result(
            name,
            message=inserted ~ ' inserted, ' ~ updated ~ ' updated, ' ~ deleted ~ ' deleted',
            code='action_merge',
            rows_affected=inserted + updated + deleted,
        ) -%}
    {%- endfor -%}
{% endmacro %}


{% macro action_merge_report(relation) %}
    {#-
        Called by action_merge after the model's post-hooks:
        the model's result, which dbt prints in its line for the model and
        keeps in run_results.json and in on-run-end's results, says what the
        run changed in the table, e.g. '12 inserted, 3 updated, 0 deleted'
        (a table built anew: its row count, '1200 inserted'), followed by
        what compaction did when the table was compacted. The run history
        (visitor_lookup_record_run) reads the counts from there.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set changes = load_result('action_merge_changes') -%}
    {%- if changes is none -%}
        {%- set built = action_merge_built_rows(relation) -%}
        {%- set parts = [built ~ ' inserted'] -%}
        {%- set rows_affected = built -%}
        {%- do visitor_lookup_carry(model.name, {'inserted': built}) -%}
    {%- else -%}
        {%- set parts = [changes.response | string] -%}
        {%- set rows_affected = changes.response.rows_affected -%}
    {%- endif -%}
    {%- set compaction = load_result('visitor_lookup_compaction') -%}
    {%- if compaction is not none -%}
        {%- do parts.append(compaction.response | string) -%}
        {%- do visitor_lookup_carried(model.name).update({'compaction': 1}) -%}
    {%- endif -%}
    {%- do store_raw_result('main', message=parts | join(', '), code='action_merge', rows_affected=rows_affected) -%}
    {{ return('') }}
{% endmacro %}


{% macro action_merge_built_rows(relation) %}
    {#-
        How many rows a table just built holds. On Delta its commit says so
        (DESCRIBE HISTORY's numOutputRows), where a count would load the
        table's state first (docs/performance.md); a count otherwise.
    -#}
    {%- if visitor_lookup_is_delta_target() -%}
        {%- set commit = run_query('describe history ' ~ relation ~ ' limit 1').rows[0] -%}
        {#- dbt hands a map column back as its JSON -#}
        {%- set metrics = fromjson(commit['operationMetrics']) -%}
        {%- if commit['operation'].endswith('AS SELECT') and metrics is mapping and 'numOutputRows' in metrics -%}
            {{ return(metrics['numOutputRows'] | int) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(run_query('select count(*) as row_count from ' ~ relation).rows[0]['row_count']) }}
{% endmacro %}
