{#-
    This run's state and loaded_at range (spec §5), computed by
    get_run_limits from the manifest and logged, and its run number; the
    events files written since the previous run are checked before it is
    written (visitor_lookup_check_event_files); the files new since the last
    run that completed are read whole, and a standard run that finds the
    events folder as the previous, completed, run found it, but for files
    added since, reads no lookback (visitor_lookup_skip_lookback). Run it alone
    (dbt run --select base_new_event_limits) to see the state: nothing else
    changes.
-#}
{{
    config(
        materialized='scratch_table',
        schema=visitor_lookup_schema(),
        file_format=visitor_lookup_scratch_file_format(),
    )
}}

{%- set manifest = ref('visitor_lookup', 'incremental_manifest') -%}
{%- if execute -%}
{%- set resolved = visitor_lookup_resolve_run_limits(manifest, this) -%}
{%- set events = source('visitor_lookup', 'pageviews') -%}
{%- set listing = visitor_lookup_check_event_files(
    events, resolved.files_since, resolved.previous_listing_last_modified, resolved.new_files_after
) -%}
{%- set limits = visitor_lookup_skip_lookback(resolved, listing) -%}
{%- do visitor_lookup_log_run_limits(limits) -%}
{#- What the models after this one read of it (visitor_lookup_run_limits), kept instead of read back. -#}
{%- do visitor_lookup_keep_fact('run limits ' ~ this, {
    'state': limits.state, 'lower_limit': limits.lower_limit, 'upper_limit': limits.upper_limit,
    'run_number': limits.run_number, 'confirmed_run_number': limits.confirmed_run_number,
    'max_last_success': limits.max_last_success, 'reads_lookback': limits.reads_lookback,
    'new_files_after': limits.new_files_after, 'new_files': limits.new_files,
}) -%}
{%- else -%}
    {%- set limits = {
        'state': 0, 'state_name': '', 'lower_limit': none, 'upper_limit': none,
        'min_last_success': none, 'max_last_success': none, 'models_in_manifest': 0, 'models_missing': [],
        'run_number': 1, 'confirmed_run_number': 0, 'reads_lookback': true, 'new_files_after': none,
        'new_files': none, 'listing_digest': none, 'listing_last_modified': none, 'listing_files': none,
        'computed_at': none,
    } -%}
{%- endif %}

select
    {{ limits.state }} as state,  -- noqa: RF04
    '{{ limits.state_name }}' as state_name,
    {{ visitor_lookup_timestamp_literal(limits.lower_limit) }} as lower_limit,
    {{ visitor_lookup_timestamp_literal(limits.upper_limit) }} as upper_limit,
    {{ visitor_lookup_timestamp_literal(limits.min_last_success) }} as min_last_success,
    {{ visitor_lookup_timestamp_literal(limits.max_last_success) }} as max_last_success,
    {{ limits.models_in_manifest }} as models_in_manifest,
    {{ visitor_lookup_string_array(limits.models_missing) }} as models_missing,
    {{ limits.run_number }} as run_number,
    {{ limits.confirmed_run_number }} as confirmed_run_number,
    {{ limits.reads_lookback }} as reads_lookback,
    {{ visitor_lookup_timestamp_literal(limits.new_files_after) }} as new_files_after,
    {{ limits.new_files if limits.new_files is not none else 'cast(null as bigint)' }} as new_files,
    {{ limits.listing_digest if limits.listing_digest is not none else 'cast(null as bigint)' }} as listing_digest,
    {{ visitor_lookup_timestamp_literal(limits.listing_last_modified) }} as listing_last_modified,
    {{ limits.listing_files if limits.listing_files is not none else 'cast(null as bigint)' }} as listing_files,
    {{ visitor_lookup_timestamp_literal(limits.computed_at) }} as computed_at
