{#-
    Timestamp text is UTC whatever the session's time zone: a literal names
    its offset, and a rendering names its zone (date_format and to_date
    would use the session's).
-#}

{% macro visitor_lookup_timestamp_literal(value) %}
    {#- A Spark timestamp literal from UTC 'YYYY-MM-DD HH:MM:SS[.ffffff]' text, or a typed NULL. -#}
    {%- if value is none -%}
        {{ return('cast(null as timestamp)') }}
    {%- endif -%}
    {{ return("timestamp'" ~ value ~ "+00:00'") }}
{% endmacro %}


{% macro visitor_lookup_timestamp_text(expression) %}
    {#-
        Render a timestamp as UTC text, microseconds kept: to_csv of one field takes a zone. NULL stays
        NULL by the case: to_csv says it never gives NULL, and Spark's generated code fails when it does.
    -#}
    {%- set options = "map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS', 'timeZone', 'UTC')" -%}
    {{ return("case when (" ~ expression ~ ") is not null then to_csv(named_struct('t', " ~ expression ~ "), "
        ~ options ~ ") end") }}
{% endmacro %}


{% macro visitor_lookup_utc_instant(column) %}
    {#-
        A source's timestamp column as an instant: a zoned one as it is, one
        without a zone (timestamp_ntz) as UTC wall-clock time, where a cast
        would take the session's zone. Spark folds typeof, so a zoned
        column's filters still prune. Anything else (text, outside the
        contract) by try_cast: a value that is not a time is NULL, so the
        event is quarantined, where ANSI SQL mode would fail the run.
    -#}
    case
        when typeof({{ column }}) = 'timestamp_ntz'
            then make_timestamp(
                year({{ column }}), month({{ column }}), day({{ column }}),
                hour({{ column }}), minute({{ column }}), extract(second from {{ column }}), 'UTC'
            )
        else try_cast({{ column }} as timestamp)
    end
{%- endmacro %}


{% macro visitor_lookup_utc_date(expression) %}
    {#- The UTC date of a timestamp: its whole days since the epoch, floored. -#}
    {{ return("date_from_unix_date(cast(floor(unix_micros(" ~ expression ~ ") / 86400000000) as int))") }}
{% endmacro %}


{% macro visitor_lookup_parse_timestamp(text) %}
    {#- A datetime from visitor_lookup_timestamp_text's text, or none. -#}
    {%- if text is none -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(modules.datetime.datetime.strptime(text, '%Y-%m-%d %H:%M:%S.%f')) }}
{% endmacro %}


{% macro visitor_lookup_format_timestamp(value) %}
    {#- The text visitor_lookup_timestamp_text gives for a datetime. -#}
    {{ return(value.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
{% endmacro %}
