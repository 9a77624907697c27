{#-
    How the window reads a folder of Parquet files: through temporary views
    with the layout's columns and types, never with the columns of whichever
    file Spark opens first.
-#}

{% macro visitor_lookup_event_columns(numbers=[]) -%}
    {#-
        The columns a folder's files are read with and their types
        (visitor_lookup_event_layout), as a table's column list; those named
        in numbers as 64-bit numbers.
    -#}
    {%- for name, type in visitor_lookup_event_layout().file_columns.items() -%}
        {{ adapter.quote(name) }} {{ 'bigint' if name in numbers else type }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}


{% macro visitor_lookup_events_read(events, written_after=none) %}
    {#-
        What the window reads the events from: a table source as it is; a
        folder through a temporary view with the contract's columns, created
        on the window model's connection just before it reads. Without the
        columns Spark takes them from the first file by path, so that one
        odd file (even an empty one) would decide them for all. The view
        lists the folder when it is created, that is once per run. With
        written_after (timestamp text, 'YYYY-MM-DDTHH:MM:SS.ffffff'), a second view
        over the files modified after it, whose name is returned instead;
        for a table source, none.
    -#}
    {%- if not execute or events.schema != 'parquet' -%}
        {{ return(events if written_after is none else none) }}
    {%- endif -%}
    {%- set name = 'visitor_lookup_event_files' ~ ('' if written_after is none else '_written_since') -%}
    {%- set options = {} if written_after is none else {'modifiedAfter': written_after} -%}
    {%- do visitor_lookup_parquet_view(name, visitor_lookup_event_columns(), events.identifier, options) -%}
    {{ return(name) }}
{% endmacro %}


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
    {{ return(visitor_lookup_events_read(events, written_after=written_after or '1970-01-01T00:00:00.000000')) }}
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
