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


{% macro exact_run_stored_rows_of_keys(keys) %}
    {#-
        The stored events a later run compares its events' ids with: on
        Iceberg the data files holding one of `keys` (a query of event_key
        values), found by one statement that reads the event_key column
        alone; elsewhere every stored row; on the first run none. The
        table is only ever appended to, so its data files hold all its rows.
    -#}
    {%- if not is_incremental() -%}
        {{ return(exact_run_this_or_empty({'event_id': 'string'})) }}
    {%- endif -%}
    {%- if var('run_floor__file_format') != 'iceberg' or not execute -%}
        {{ return(this) }}
    {%- endif -%}
    {%- set found -%}
        select to_json(collect_set(_file)) as data_files
        from {{ this }}
        where event_key in ({{ keys }})
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
