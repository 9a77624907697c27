{#-
    Which of the source's columns make the five columns of an event (spec
    §3): a tracker's preset (visitor_lookup__events_preset), then the vars
    visitor_lookup__event_columns, visitor_lookup__event_filter and
    visitor_lookup__event_file_columns over it, entry by entry. Applied
    where the window reads the source, before anything cleans the events.
-#}

{% macro visitor_lookup_event_contract() %}
    {#- The five columns of an event and their types (spec §3), in order. -#}
    {{ return({
        'event_id': 'string', 'visitor_cookie_id': 'string', 'user_id': 'string',
        'landed': 'timestamp', 'loaded_at': 'timestamp',
    }) }}
{% endmacro %}


{% macro visitor_lookup_event_presets() %}
    {#-
        The standard warehouse layouts of the trackers teams use: what makes
        each of the five columns, which rows are page views, and the
        columns (with their types) a folder of the tracker's files is read
        with. docs/design.md ("Tracker presets") says why each timestamp.
    -#}
    {%- set page_calls = {
        'columns': {
            'event_id': 'id', 'visitor_cookie_id': 'anonymous_id', 'user_id': 'user_id',
            'landed': '`timestamp`', 'loaded_at': 'uuid_ts',
        },
        'filter': none,
        'file_columns': {
            'id': 'string', 'anonymous_id': 'string', 'user_id': 'string',
            'timestamp': 'timestamp', 'uuid_ts': 'timestamp',
        },
    } -%}
    {#- GA4 exports no event id: these columns together identify an event, and a copy has them all alike. -#}
    {%- set ga4_event_id -%}
        md5(concat_ws('|',
            coalesce(stream_id, ''), coalesce(user_pseudo_id, ''), coalesce(cast(event_timestamp as string), ''),
            coalesce(event_name, ''), coalesce(cast(event_bundle_sequence_id as string), ''),
            coalesce(cast(batch_event_index as string), '')
        ))
    {%- endset -%}
    {{ return({
        'snowplow': {
            'columns': {
                'event_id': 'event_id', 'visitor_cookie_id': 'domain_userid', 'user_id': 'user_id',
                'landed': 'coalesce(derived_tstamp, collector_tstamp)', 'loaded_at': 'load_tstamp',
            },
            'filter': "event_name = 'page_view'",
            'file_columns': {
                'event_id': 'string', 'event_name': 'string', 'domain_userid': 'string', 'user_id': 'string',
                'derived_tstamp': 'timestamp', 'collector_tstamp': 'timestamp', 'load_tstamp': 'timestamp',
            },
        },
        'segment': page_calls,
        'rudderstack': page_calls,
        'ga4': {
            'columns': {
                'event_id': ga4_event_id | trim,
                'visitor_cookie_id': "concat(" ~ visitor_lookup_normalise_id('user_pseudo_id') ~ ", '.', stream_id)",
                'user_id': 'user_id',
                'landed': 'timestamp_micros(event_timestamp)',
                'loaded_at': 'loaded_at',
            },
            'filter': "event_name = 'page_view'",
            'file_columns': {
                'event_name': 'string', 'event_timestamp': 'bigint', 'event_bundle_sequence_id': 'bigint',
                'batch_event_index': 'bigint', 'stream_id': 'string', 'user_pseudo_id': 'string',
                'user_id': 'string', 'loaded_at': 'timestamp',
            },
        },
    }) }}
{% endmacro %}


{% macro visitor_lookup_event_layout() %}
    {#-
        The layout this run reads: 'columns', the Spark SQL that makes each
        of the five columns (a name the mapping leaves out keeps its own
        column); 'filter', the predicate that keeps a source row as an event
        (none: every row); 'file_columns', the columns and types a folder is
        read with (the five of the contract when no preset or var names
        others); 'mapped', whether any of it differs from the contract.
    -#}
    {%- set presets = visitor_lookup_event_presets() -%}
    {%- set preset_name = var('visitor_lookup__events_preset') | string | trim | lower -%}
    {%- if preset_name and preset_name not in presets -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__events_preset must be empty or one of "
            ~ presets.keys() | join(', ') ~ ", got '" ~ preset_name ~ "'."
        ) }}
    {%- endif -%}
    {%- set preset = presets.get(preset_name, {}) -%}
    {%- set contract = visitor_lookup_event_contract() -%}
    {%- set chosen_columns = visitor_lookup_var_mapping('visitor_lookup__event_columns') -%}
    {%- set unknown = chosen_columns.keys() | reject('in', contract.keys()) | list -%}
    {%- if unknown -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__event_columns maps " ~ unknown | join(', ')
            ~ ", which is not a column of an event; it maps any of " ~ contract.keys() | join(', ') ~ "."
        ) }}
    {%- endif -%}
    {%- set columns = {} -%}
    {%- for name in contract -%}
        {%- do columns.update({
            name: (chosen_columns.get(name) or preset.get('columns', {}).get(name) or name) | trim
        }) -%}
    {%- endfor -%}
    {%- set chosen_filter = var('visitor_lookup__event_filter') -%}
    {%- if chosen_filter is not string -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var visitor_lookup__event_filter must be a Spark SQL predicate as text, got '"
            ~ chosen_filter ~ "'."
        ) }}
    {%- endif -%}
    {%- set event_filter = chosen_filter | trim or preset.get('filter') or none -%}
    {%- set file_columns = {} -%}
    {%- do file_columns.update(preset.get('file_columns', contract)) -%}
    {%- do file_columns.update(visitor_lookup_var_mapping('visitor_lookup__event_file_columns')) -%}
    {{ return({
        'columns': columns,
        'filter': event_filter,
        'file_columns': file_columns,
        'mapped': columns.keys() | list != columns.values() | list or event_filter is not none or file_columns != contract,
    }) }}
{% endmacro %}


{% macro visitor_lookup_mapped_events(relation, layout) %}
    {#- The source's rows the filter keeps, as the five columns of an event; for a table's or a view's FROM. -#}
    select
        {{ layout.columns.event_id }} as event_id,
        {{ layout.columns.visitor_cookie_id }} as visitor_cookie_id,
        {{ layout.columns.user_id }} as user_id,
        {{ visitor_lookup_utc_instant(layout.columns.landed) }} as landed,
        {{ visitor_lookup_utc_instant(layout.columns.loaded_at) }} as loaded_at
    from {{ relation }}
    {%- if layout.filter %}
    where {{ layout.filter }}
    {%- endif %}
{% endmacro %}


{% macro visitor_lookup_check_event_layout() %}
    {#-
        on-run-start, where the layout differs from the contract: each of
        the five expressions and the filter are analysed against the source
        (a folder through the view the window reads it with), so that an
        unknown column, an expression that does not parse or a result of the
        wrong type stops the run before any model, in one line naming the
        var. Nothing is read but the table's or the files' schema.
    -#}
    {%- set layout = visitor_lookup_event_layout() -%}
    {%- if not execute or not layout.mapped -%}
        {{ return('') }}
    {%- endif -%}
    {%- set source = visitor_lookup_source_relation('visitor_lookup', 'pageviews') -%}
    {%- set undeclared = {} -%}
    {%- if source.schema == 'parquet' -%}
        {%- set events = try_or_compiler_error(
            "Visitor lookup: the events folder " ~ source.identifier ~ " cannot be read with the columns "
            ~ visitor_lookup_event_columns() ~ ": the folder is missing, or var visitor_lookup__event_file_columns "
            ~ "(or the preset's) names a type Spark does not know.",
            visitor_lookup_events_read, source
        ) -%}
        {%- set available = layout.file_columns.keys() | list -%}
        {%- set undeclared = visitor_lookup_undeclared_file_columns(source.identifier, layout) -%}
    {%- else -%}
        {%- set events = source -%}
        {%- set available = adapter.get_columns_in_relation(source) | map(attribute='name') | list -%}
        {%- if not available -%}
            {{ exceptions.raise_compiler_error(
                "Visitor lookup: the events table " ~ source ~ " does not exist or has no columns; set "
                ~ "visitor_lookup__events_schema and visitor_lookup__events_table to the table of page views."
            ) }}
        {%- endif -%}
    {%- endif -%}
    {%- set checks = [] -%}
    {%- for name, type in visitor_lookup_event_contract().items() -%}
        {%- do checks.append({
            'what': 'visitor_lookup__event_columns maps ' ~ name ~ ' to ' ~ layout.columns[name],
            'expression': layout.columns[name],
            'types': ['timestamp', 'timestamp_ntz'] if type == 'timestamp' else ['string'],
        }) -%}
    {%- endfor -%}
    {%- if layout.filter -%}
        {%- do checks.append({
            'what': 'visitor_lookup__event_filter is ' ~ layout.filter, 'expression': layout.filter, 'types': ['boolean'],
        }) -%}
    {%- endif -%}
    {%- set cannot_analyse = "Visitor lookup: var {what}, which Spark cannot analyse over " ~ source
        ~ ": a column it names is not there, or it does not parse. Columns there: " ~ available | join(', ') ~ "." -%}
    {%- if undeclared -%}
        {%- set cannot_analyse = "Visitor lookup: var {what}, but the events folder " ~ source.identifier
            ~ " is not read with the columns of its files the mapping names: "
            ~ undeclared.items() | map('join', ' ') | join(', ') ~ "; declare them in var "
            ~ "visitor_lookup__event_file_columns, as " ~ tojson(undeclared) ~ "." -%}
    {%- endif -%}
    {%- for check in checks -%}
        {%- set described = try_or_compiler_error(
            cannot_analyse | replace('{what}', check.what),
            run_query, "describe query select " ~ check.expression ~ " as checked from " ~ events
        ) -%}
        {%- set result_type = described.rows[0]['data_type'] -%}
        {%- if result_type not in check.types -%}
            {{ exceptions.raise_compiler_error(
                "Visitor lookup: var " ~ check.what ~ ", which gives " ~ result_type ~ " where it must give "
                ~ check.types | join(' or ')
                ~ (" (microseconds since the epoch: timestamp_micros(column))" if 'timestamp' in check.types else "")
                ~ (" (cast(column as string))" if 'string' in check.types else "") ~ "."
            ) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}

