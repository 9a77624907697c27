{#-
    Events read from a folder of Parquet files are checked file by file
    before a run reads them, so that a file nobody meant to write stops the
    run with a line naming it, before anything changes, instead of a Java
    stack trace from the middle of a model (or, for a missing column, rows
    that quietly read as NULL). The window then reads the folder with the
    layout's columns and types (event_files_read.sql).
-#}

{% macro visitor_lookup_check_event_files(events, since, previous_last_modified=none, new_after=none) %}
    {#-
        Checks the files of the events folder modified after `since` (when
        the previous run computed its limits, less the clock-skew allowance
        for the file system's clock; all of them on a first run) or after
        new_after, whichever is earlier: every file this run reads whole
        (visitor_lookup_resolve_run_limits). Raises one line per bad file; a
        table source (its schema enforced by its format) is not checked,
        nor is anything when dbt only compiles. Returns, from the same
        statement, what visitor_lookup_skip_lookback compares with the
        previous run's listing: the digest of the folder's listing (one
        number from every file's path, size and modification time, equal
        from run to run exactly while no file is added, removed or written
        again), the latest modification time in it and how many files it
        has; given the previous listing's latest (previous_last_modified,
        timestamp text), the digest and the count of the files modified up
        to it; and how many were modified after new_after (all when none);
        none when nothing is checked.
    -#}
    {%- if not execute or flags.WHICH not in ['run', 'build', 'retry'] or events.schema != 'parquet' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set since = [since, new_after] | min if new_after is not none else since -%}
    {%- set folder = events.identifier -%}
    {%- set columns = visitor_lookup_event_layout().columns -%}
    {%- do visitor_lookup_new_files_view(
        'visitor_lookup_new_event_files', visitor_lookup_event_columns(), folder, since
    ) -%}
    {%- set query -%}
        with folder_files as (
            -- the listing only: the files' content is not read
            select
                path,
                length,
                modificationtime
            from binaryfile.{{ adapter.quote(folder) }}
        ),

        folder_listing as (
            -- xor: the same files in any order give the same digest
            select
                bit_xor(xxhash64(path, length, modificationtime)) as listing_digest,
                {{ visitor_lookup_timestamp_text('max(modificationtime)') }} as last_modified,
                bit_xor(
                    case
                        when modificationtime <= {{ visitor_lookup_timestamp_literal(previous_last_modified) }}
                            then xxhash64(path, length, modificationtime)
                    end
                ) as digest_through_previous,
                count(*) as files,
                count_if(
                    modificationtime <= {{ visitor_lookup_timestamp_literal(previous_last_modified) }}
                ) as files_through_previous,
                {%- if new_after is none %}
                count(*) as new_files
                {%- else %}
                count_if(modificationtime > {{ visitor_lookup_timestamp_literal(new_after) }}) as new_files
                {%- endif %}
            from folder_files
        ),

        listed_files as (
            select
                path,
                {{ visitor_lookup_file_key('path') }} as file_key
            from folder_files
            where modificationtime > {{ visitor_lookup_timestamp_literal(since) }}
        ),

        counts_per_file as (
            -- A file that cannot be read with these columns and types is skipped here, not raised.
            -- Grouped by the reader's path as it is: its key is made once per file, not once per row.
            select
                input_file_name() as file_uri,
                count(*) as events,
                count({{ columns.event_id }}) as with_event_id,
                count({{ columns.visitor_cookie_id }}) as with_visitor_cookie_id,
                count({{ columns.user_id }}) as with_user_id,
                count({{ columns.landed }}) as with_landed,
                count({{ columns.loaded_at }}) as with_loaded_at
            from visitor_lookup_new_event_files
            group by input_file_name()
        ),

        files_read_as_events as (
            select
                {{ visitor_lookup_file_key('file_uri') }} as file_key,
                events,
                with_event_id,
                with_visitor_cookie_id,
                with_user_id,
                with_landed,
                with_loaded_at
            from counts_per_file
        ),

        checked_files as (
            select
                listed_files.path,
                files_read_as_events.events,
                files_read_as_events.with_event_id,
                files_read_as_events.with_visitor_cookie_id,
                files_read_as_events.with_user_id,
                files_read_as_events.with_landed,
                files_read_as_events.with_loaded_at,
                case
                    when files_read_as_events.file_key is null then 'unread'
                    when files_read_as_events.with_event_id = 0 then 'event_id'
                    when files_read_as_events.with_landed = 0 then 'landed'
                    when files_read_as_events.with_loaded_at = 0 then 'loaded_at'
                end as problem
            from listed_files
            -- Null-safe: with = Spark infers files_read_as_events.file_key is not null and filters on it
            -- before grouping, making the key of every row instead of every file. No key is NULL.
            left join files_read_as_events
                on listed_files.file_key <=> files_read_as_events.file_key
        )

        -- One row with the digest and no file when no file is new. Every count is selected: a column no
        -- output needs would not be read, nor its type checked.
        select
            folder_listing.listing_digest,
            folder_listing.last_modified,
            folder_listing.digest_through_previous,
            folder_listing.files,
            folder_listing.files_through_previous,
            folder_listing.new_files,
            checked_files.path,
            checked_files.events,
            checked_files.with_event_id,
            checked_files.with_visitor_cookie_id,
            checked_files.with_user_id,
            checked_files.with_landed,
            checked_files.with_loaded_at,
            checked_files.problem
        from folder_listing
        left join checked_files
            on true
    {%- endset -%}
    {%- set rows = run_query(query).rows -%}
    {%- set files = rows | rejectattr('path', 'none') | list -%}
    {%- set unread = files | selectattr('problem', 'equalto', 'unread') | map(attribute='path') | list -%}
    {%- set problems = [] -%}
    {%- for file in visitor_lookup_unread_event_files(folder, since, unread) -%}
        {%- do problems.append(file.path ~ " " ~ file.problem) -%}
    {%- endfor -%}
    {%- for file in files if file.problem not in [none, 'unread'] -%}
        {%- set made_of = '' if columns[file.problem] == file.problem else ' (' ~ columns[file.problem] ~ ')' -%}
        {%- do problems.append(file.path ~ " has no " ~ file.problem ~ made_of ~ " in any of its " ~ file.events
            ~ " rows: the column is missing or empty") -%}
    {%- endfor -%}
    {%- do log("Visitor lookup: checked " ~ files | length ~ " events file(s) written since " ~ since, info=True) -%}
    {%- if problems -%}
        {%- do exceptions.raise_compiler_error(
            "Visitor lookup: the events folder holds files this run cannot read; nothing was changed. "
            ~ "Move each out of " ~ folder ~ " or write it again, then run again:\n  "
            ~ problems | join("\n  ")
        ) -%}
    {%- endif -%}
    {{ return({
        'digest': rows[0]['listing_digest'],
        'last_modified': rows[0]['last_modified'],
        'digest_through_previous': rows[0]['digest_through_previous'],
        'files': rows[0]['files'],
        'files_through_previous': rows[0]['files_through_previous'],
        'new_files': rows[0]['new_files'],
    }) }}
{% endmacro %}


{% macro visitor_lookup_new_files_view(name, columns, folder, since) %}
    {#-
        A temporary view over the Parquet files of the folder written after
        `since`, read with these columns; a file it cannot read so is
        skipped, not raised.
    -#}
    {%- do visitor_lookup_parquet_view(
        name, columns, folder, {'ignoreCorruptFiles': 'true', 'modifiedAfter': since | replace(' ', 'T')}
    ) -%}
{% endmacro %}


{% macro visitor_lookup_unread_event_files(folder, since, paths) %}
    {#-
        Why each of these files could not be read as events: not Parquet at
        all or cut short (no PAR1 mark at both ends), or Parquet with rows
        but times stored as numbers (nanosecond timestamps, pandas' default,
        included: Spark reads them only as numbers) or another column of
        another type. Returns a row per such file: path and problem. A
        Parquet file without rows is fine and is not returned, nor is one
        read as events after all: it appeared between the check's two
        listings of the folder.
    -#}
    {%- if not paths -%}
        {{ return([]) }}
    {%- endif -%}
    {%- do visitor_lookup_new_files_view(
        'visitor_lookup_new_event_file_rows', 'visitor_lookup_no_column string', folder, since
    ) -%}
    {%- do visitor_lookup_new_files_view(
        'visitor_lookup_new_event_files', visitor_lookup_event_columns(), folder, since
    ) -%}
    {%- set file_columns = visitor_lookup_event_layout().file_columns -%}
    {%- set types = file_columns.values() | unique | list -%}
    {%- set times = file_columns.items() | selectattr('1', 'in', ['timestamp', 'timestamp_ntz']) | map('first') | list -%}
    {%- do visitor_lookup_new_files_view(
        'visitor_lookup_new_event_file_numbers', visitor_lookup_event_columns(numbers=times), folder, since
    ) -%}
    {#- every column asked for (in an expression that can be NULL, which count cannot drop), so that each is read -#}
    {%- set rows_with_any_column -%}
        count(coalesce(
            {%- for name in file_columns %}cast({{ adapter.quote(name) }} as string){{ ', ' if not loop.last }}{% endfor -%}
        ))
    {%- endset -%}
    {%- set path_list -%}
        {%- for path in paths %}{{ visitor_lookup_string_literal(path) }}{{ ', ' if not loop.last }}{% endfor -%}
    {%- endset -%}
    {%- set query -%}
        with unread_files as (
            -- only the marks Parquet puts at a file's start and end are looked at
            select
                path,
                {{ visitor_lookup_file_key('path') }} as file_key,
                substring(content, 1, 4) = x'50415231' and substring(content, -4, 4) = x'50415231' as marked_as_parquet
            from binaryfile.{{ adapter.quote(folder) }}
            where path in ({{ path_list }})
        ),

        rows_per_file as (
            -- no column asked for: only the row counts in each file's footer are read
            select
                input_file_name() as file_uri,
                count(*) as row_count
            from visitor_lookup_new_event_file_rows
            group by input_file_name()
        ),

        events_per_file as (
            -- every column read, and its type checked
            select
                input_file_name() as file_uri,
                {{ rows_with_any_column }} as events
            from visitor_lookup_new_event_files
            group by input_file_name()
        ),

        numbers_per_file as (
            -- the same with the times read as 64-bit numbers
            select
                input_file_name() as file_uri,
                {{ rows_with_any_column }} as events
            from visitor_lookup_new_event_file_numbers
            group by input_file_name()
        ),

        rows_read as (
            select
                {{ visitor_lookup_file_key('file_uri') }} as file_key,
                row_count
            from rows_per_file
        ),

        numbers_read as (
            select
                {{ visitor_lookup_file_key('file_uri') }} as file_key,
                events
            from numbers_per_file
        ),

        events_read as (
            select
                {{ visitor_lookup_file_key('file_uri') }} as file_key,
                events
            from events_per_file
        )

        -- null-safe, so that each key is made once per file (visitor_lookup_check_event_files)
        select
            unread_files.path,
            case
                when not unread_files.marked_as_parquet then 'is not a Parquet file, or was cut short'
                when events_read.events > 0 then null
                when numbers_read.events > 0
                    then 'stores a time ({{ times | join(", ") }}) as 64-bit numbers or nanosecond timestamps, '
                    || 'which Spark reads only as numbers (write it again with microsecond timestamps, '
                    || 'or map the numbers with visitor_lookup__event_columns and visitor_lookup__event_file_columns)'
                when rows_read.row_count > 0
                    then 'has a column of another type ({% for type in types -%}
                        {{ file_columns.items() | selectattr('1', 'equalto', type) | map('first') | join(', ') }}: {{ type }}
                        {{- '; ' if not loop.last }}
                    {%- endfor %})'
            end as problem
        from unread_files
        left join rows_read
            on unread_files.file_key <=> rows_read.file_key
        left join events_read
            on unread_files.file_key <=> events_read.file_key
        left join numbers_read
            on unread_files.file_key <=> numbers_read.file_key
    {%- endset -%}
    {{ return(run_query(query).rows | rejectattr('problem', 'none') | list) }}
{% endmacro %}
