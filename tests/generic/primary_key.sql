{% test primary_key(model, column_name, not_null=[]) %}
{#-
    The keys (column_name) that are NULL or held by more than one row, or
    whose rows have a NULL in any of not_null: dbt's unique and not_null
    tests in one read of the table.
-#}
with checked_rows as (
    select
        {{ column_name }} as key_value,
        {{ visitor_lookup_null_columns([column_name] + not_null) }} as null_columns
    from {{ model }}
)

select
    key_value,
    count(*) as rows_with_key,
    max(null_columns) as null_columns
from checked_rows
group by key_value
having count(*) > 1 or max(null_columns) != ''
{% endtest %}
