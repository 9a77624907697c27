{% macro visitor_lookup_null_columns(columns) %}
    {#- SQL naming which of `columns` are NULL in a row ('user_id is null, ...'), '' when none is (or none given). -#}
    concat_ws(
        ', '
        {%- for column in columns %},
        case when {{ column }} is null then '{{ column }} is null' end
        {%- endfor %}
    )
{%- endmacro %}
