{#-
    Typed, validated access to the project's vars. A bad value fails the run
    with a message that names the var and says what it takes.
-#}

{% macro visitor_lookup_var_whole_number(name, minimum) %}
    {%- set value = var(name) -%}
    {%- set text = value | string | trim -%}
    {%- if value is boolean or not modules.re.fullmatch('[0-9]+', text) or (text | int) < minimum -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a whole number >= " ~ minimum
            ~ ", got '" ~ value ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(text | int) }}
{% endmacro %}


{% macro visitor_lookup_var_boolean(name) %}
    {%- set value = var(name) -%}
    {%- if value is not boolean -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be true or false, got '" ~ value
            ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_var_schema_name(name) %}
    {#- A var that names a schema: its name, or none when it is empty. -#}
    {%- set chosen = var(name) | string | trim -%}
    {%- set foreign = chosen | lower | list | reject('in', 'abcdefghijklmnopqrstuvwxyz0123456789_') | list -%}
    {%- if foreign -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be empty or a name of letters, digits and "
            ~ "underscores, got '" ~ chosen ~ "'."
        ) }}
    {%- endif -%}
    {{ return(chosen or none) }}
{% endmacro %}


{% macro visitor_lookup_var_mapping(name) %}
    {#- A var that maps names to text: a dict of non-empty strings; {} when it is empty. -#}
    {%- set value = var(name) -%}
    {%- if value is none or value == '' -%}
        {{ return({}) }}
    {%- endif -%}
    {%- if value is not mapping or value.values() | reject('string') | list
        or value.values() | map('trim') | reject | list -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a mapping of names to non-empty text, got '"
            ~ value ~ "'. Fix it in dbt_project.yml or pass --vars."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro visitor_lookup_var_timestamp(name) %}
    {#-
        A var that names a UTC instant, 'YYYY-MM-DD' or 'YYYY-MM-DD
        HH:MM:SS[.ffffff]', as timestamp text with microseconds; none when
        it is empty. A date the calendar lacks (2026-02-30) fails too.
    -#}
    {%- set value = var(name) | string | trim -%}
    {%- if not value -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set parts = modules.re.fullmatch(
        '([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.]([0-9]{1,6}))?)?', value) -%}
    {%- set numbers = (parts.groups()[:6] | map('default', '0', true) | map('int') | list) if parts else [] -%}
    {%- set valid = parts and 1 <= numbers[0] < 9999 and 1 <= numbers[1] <= 12 and numbers[3] <= 23
        and numbers[4] <= 59 and numbers[5] <= 59 -%}
    {%- if valid -%}
        {%- set month_end = modules.datetime.date(numbers[0] + numbers[1] // 12, numbers[1] % 12 + 1, 1)
            - modules.datetime.timedelta(days=1) -%}
        {%- set valid = 1 <= numbers[2] <= month_end.day -%}
    {%- endif -%}
    {%- if not valid -%}
        {{ exceptions.raise_compiler_error(
            "Visitor lookup: var " ~ name ~ " must be a date 'YYYY-MM-DD' or a timestamp "
            ~ "'YYYY-MM-DD HH:MM:SS' (UTC) that exists, got '" ~ value ~ "'."
        ) }}
    {%- endif -%}
    {%- set micros = ((parts.group(7) or '') ~ '000000')[:6] | int -%}
    {%- set instant = modules.datetime.datetime(
        numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], micros) -%}
    {{ return(visitor_lookup_format_timestamp(instant)) }}
{% endmacro %}
