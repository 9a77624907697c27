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
