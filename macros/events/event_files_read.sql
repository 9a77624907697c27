{#-
    How the window reads a folder of Parquet files: through temporary views
    with the layout's columns and types, never with the columns of whichever
    file Spark opens first; the files whose times are nanosecond timestamps
    through views of their own.
-#}

{% macro visitor_lookup_event_columns(numbers=[]) -%}
    {#-
        The columns a folder's files are read with and their types
        (visitor_lookup_event_layout), as a table's column list; those named
        in numbers as 64-bit numbers, as Spark reads nanosecond timestamps.
    -#}
    {%- for name, type in visitor_lookup_event_layout().file_columns.items() -%}
        {{ adapter.quote(name) }} {{ 'bigint' if name in numbers else type }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}


{% macro visitor_lookup_events_read(events, written_after=none, nanosecond_files=none) %}
    {#-
        What the window reads the events from: a table source as it is; a
        folder through a temporary view with the contract's columns, created
        on the window model's connection just before it reads. Without the
        columns Spark takes them from the first file by path, so that one
        odd file (even an empty one) would decide them for all. The view
        lists the folder when it is created, that is once per run. With
        written_after (timestamp text, 'YYYY-MM-DDTHH:MM:SS.ffffff'), a second view
        over the files modified after it, whose name is returned instead;
        for a table source, none. The files of nanosecond_files (path: the
        times it stores in nanoseconds) are read apart, those times as
        numbers turned into microseconds, and the view is their union with
        the other files, which a listing of the folder names, once per
        invocation (a file written after it is read by the next run, as new).
    -#}
    {%- if not execute or events.schema != 'parquet' -%}
        {{ return(events if written_after is none else none) }}
    {%- endif -%}
    {%- set name = 'visitor_lookup_event_files' ~ ('' if written_after is none else '_written_since') -%}
    {%- set options = {} if written_after is none else {'modifiedAfter': written_after} -%}
    {%- set columns = visitor_lookup_event_layout().file_columns -%}
    {%- if not nanosecond_files -%}
        {%- do visitor_lookup_parquet_view(name, visitor_lookup_event_columns(), events.identifier, options) -%}
        {{ return(name) }}
    {%- endif -%}
    {#-
        Globs cannot leave names out: the others are named, from a listing of the folder, one per
        invocation for the window's two views.
    -#}
    {%- set listing -%}
        select to_json(collect_list(path)) as paths from binaryfile.{{ adapter.quote(events.identifier) }}
    {%- endset -%}
    {%- set listed = fromjson(visitor_lookup_fetch_once('event files ' ~ events.identifier, listing)['paths']) -%}
    {%- set other_names = [] -%}
    {%- for path in listed if path not in nanosecond_files -%}
        {%- do other_names.append(visitor_lookup_file_name(path)) -%}
    {%- endfor -%}
    {%- do visitor_lookup_parquet_view(
        name ~ '_in_microseconds', visitor_lookup_event_columns(), events.identifier,
        dict(options, pathGlobFilter=visitor_lookup_glob_of_names(other_names))
    ) -%}
    {#- One view per set of times that files store in nanoseconds, which it reads as 64-bit numbers. -#}
    {%- set time_sets = [] -%}
    {%- for times in nanosecond_files.values() -%}
        {%- do time_sets.append(times | sort | join(',')) -%}
    {%- endfor -%}
    {%- set nanosecond_views = [] -%}
    {%- for time_set in time_sets | unique | sort -%}
        {%- set view = {'name': name ~ '_in_nanoseconds_' ~ loop.index, 'times': time_set.split(',')} -%}
        {%- set file_names = [] -%}
        {%- for path, times in nanosecond_files.items() if times | sort | join(',') == time_set -%}
            {%- do file_names.append(visitor_lookup_file_name(path)) -%}
        {%- endfor -%}
        {%- do visitor_lookup_parquet_view(
            view.name, visitor_lookup_event_columns(numbers=view.times), events.identifier,
            dict(options, pathGlobFilter=visitor_lookup_glob_of_names(file_names))
        ) -%}
        {%- do nanosecond_views.append(view) -%}
    {%- endfor -%}
    {%- call statement(name) -%}
        create or replace temporary view {{ name }} as
        select
            {%- for column in columns %}
            {{ adapter.quote(column) }}{{ ',' if not loop.last }}
            {%- endfor %}
        from {{ name }}_in_microseconds
        {%- for view in nanosecond_views %}
        union all
        select
            {%- for column, type in columns.items() %}
            {% if column in view.times -%}
                {{ visitor_lookup_nanoseconds_as_time(adapter.quote(column), type) }} as
            {% endif -%}
            {{ adapter.quote(column) }}{{ ',' if not loop.last }}
            {%- endfor %}
        from {{ view.name }}
        {%- endfor %}
    {%- endcall -%}
    {{ return(name) }}
{% endmacro %}


{% macro visitor_lookup_nanoseconds_as_time(column, type) -%}
    {#-
        A time stored as nanoseconds since the epoch, as a timestamp (or
        timestamp_ntz, without the session's zone) of its microsecond,
        floored: the nanoseconds within it are dropped, as Spark keeps no
        finer time.
    -#}
    {%- if type == 'timestamp_ntz' -%}
        timestampadd(microsecond, ({{ column }} - pmod({{ column }}, 1000)) div 1000, timestamp_ntz '1970-01-01 00:00:00')
    {%- else -%}
        timestamp_micros(({{ column }} - pmod({{ column }}, 1000)) div 1000)
    {%- endif -%}
{%- endmacro %}


{% macro visitor_lookup_recent_event_files(events, limits) %}
    {#-
        The window's view over the events files new since the last run that
        completed (modified after new_files_after), which a run in state 3
        or 4 reads whole: every event loaded from the start date, those
        without loaded_at (the file's time stands in for theirs) and those
        loaded in the future, whatever the run's lower limit, so that a file
        of events loaded long ago (a re-export, a loader that stamps at
        extraction) is read the run after it arrives (spec §5). None for a
        table source (no file times); in state 1 or 2, whose range starts at
        the start date, so every file is read whole already; and when no
        file is new.
    -#}
    {%- if limits.state <= 2 or not limits.new_files -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set written_after = visitor_lookup_parse_timestamp(limits.new_files_after) -%}
    {%- set written_after = written_after.strftime('%Y-%m-%dT%H:%M:%S.%f') if written_after is not none -%}
    {{ return(visitor_lookup_events_read(
        events, written_after=written_after or '1970-01-01T00:00:00.000000', nanosecond_files=limits.nanosecond_files
    )) }}
{% endmacro %}


{% macro visitor_lookup_parquet_view(name, columns, folder, options={}) %}
    {#-
        A temporary view over the Parquet files of the folder, read with
        these columns, with Spark's file-source options (text); one with
        modifiedAfter takes its time as UTC.
    -#}
    {%- call statement(name) -%}
        create or replace temporary view {{ name }} ({{ columns }})
        using parquet
        options (
            path {{ visitor_lookup_string_literal(folder) }}
            {%- for option, value in options.items() | sort %},
            {{ visitor_lookup_string_literal(option) }} {{ visitor_lookup_string_literal(value) }}
            {%- endfor %}
            {%- if 'modifiedAfter' in options %},
            {{ visitor_lookup_modified_after_zone() }}
            {%- endif %}
        )
    {%- endcall -%}
{% endmacro %}


{% macro visitor_lookup_modified_after_zone() %}
    {#-
        The option that makes modifiedAfter UTC text. In any other zone Spark
        compares the file's time shifted to that zone's wall clock with the
        instant the text names, and passes over the files of the last hours.
    -#}
    'timeZone' 'UTC'
{%- endmacro %}
