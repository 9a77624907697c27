{% test columns_not_null(model, columns) %}
{# Rows with a NULL in any of `columns`: one query per model instead of one per column. #}
select
    {{ columns | join(',\n    ') }}
from {{ model }}
where
    {% for column in columns -%}
    {{ column }} is null{{ ' or' if not loop.last }}
    {% endfor %}
{% endtest %}
