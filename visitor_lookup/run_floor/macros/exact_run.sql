{% macro exact_run_this_or_empty(columns) %}
    {#-
        What a floor model has stored so far: the table itself, or on its
        first run an empty relation with the given columns ({name: type}, in
        order), so one query serves both. The twin of the project's
        visitor_lookup_this_or_empty: this project cannot load the project's
        macros, whose spark__ overrides would change what the floor measures.
    -#}
    {%- if is_incremental() -%}
        {{ return(this) }}
    {%- endif -%}
    {%- set casts = [] -%}
    {%- for name, type in columns.items() -%}
        {%- do casts.append('cast(null as ' ~ type ~ ') as ' ~ name) -%}
    {%- endfor -%}
    {{ return('(select ' ~ casts | join(', ') ~ ' where false)') }}
{% endmacro %}


{% macro exact_run_loaded_after() %}
    {#-
        The loaded_at after which a floor model reads its events: on its
        first run, every event (the history); on a later run, those loaded
        after run_floor__loaded_after.
    -#}
    {{ return(var('run_floor__loaded_after') if is_incremental() else '0001-01-01 00:00:00') }}
{% endmacro %}


{% macro exact_run_rows_of_keys(relation, keys) %}
    {#-
        The rows of exact_run_events (their event_id) that an id of the
        run's can be among: on Iceberg, the data files holding one of `keys`
        (a query of event_key values), found by one statement that reads the
        event_key column alone, as processed_events finds the stored copies
        of its events; elsewhere every stored row. The table is only ever
        appended to, so its data files hold all its rows.
    -#}
    {%- if var('run_floor__file_format') != 'iceberg' or not execute -%}
        {{ return(relation) }}
    {%- endif -%}
    {#- The keys broadcast: as an IN subquery over the events' folder, whose size Spark takes for theirs, every stored key was shuffled instead. -#}
    {%- set found -%}
        select /*+ broadcast(run_keys) */ to_json(collect_set(stored_rows._file)) as data_files
        from {{ relation }} as stored_rows
        left semi join ({{ keys }}) as run_keys (event_key)
            on stored_rows.event_key = run_keys.event_key
    {%- endset -%}
    {%- set data_files = fromjson(run_query(found).rows[0]['data_files']) | sort -%}
    {%- if not data_files -%}
        {{ return('(select cast(null as string) as event_id where false)') }}
    {%- endif -%}
    {%- set rows_of_data_files -%}
        (
        {%- for data_file in data_files %}
            select event_id from parquet.`{{ data_file | replace('`', '``') }}`
            {{- ' union all' if not loop.last }}
        {%- endfor %}
        )
    {%- endset -%}
    {{ return(rows_of_data_files) }}
{% endmacro %}
