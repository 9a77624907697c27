{#-
    The four invariants of a type-2 table (spec §4). Each test returns the
    offending rows; any row fails the build.
-#}

{% test scd_start_follows_previous_end(model, key, start_column='valid_start_date', end_column='valid_end_date') %}
{# 1. Within a key, each row starts 1 microsecond after the previous row ends. #}
with ordered_rows as (
    select
        {{ key }} as scd_key,
        {{ start_column }} as valid_start_date,
        lag({{ end_column }}) over (partition by {{ key }} order by {{ start_column }}) as previous_end,
        row_number() over (partition by {{ key }} order by {{ start_column }}) as position
    from {{ model }}
)

select
    scd_key,
    valid_start_date,
    previous_end
from ordered_rows
where position > 1 and (previous_end is null or valid_start_date != previous_end + interval 1 microsecond)
{% endtest %}


{% test scd_one_current_row(model, key, current_column='is_current') %}
{# 2. Exactly one current row per key. #}
select
    {{ key }} as scd_key,
    count_if({{ current_column }}) as current_rows
from {{ model }}
group by {{ key }}
having count_if({{ current_column }}) != 1
{% endtest %}


{% test scd_unique_start(model, key, start_column='valid_start_date') %}
{# 3. No key has two rows starting at the same instant. #}
select
    {{ key }} as scd_key,
    {{ start_column }} as valid_start_date,
    count(*) as rows_starting_here
from {{ model }}
group by {{ key }}, {{ start_column }}
having count(*) > 1
{% endtest %}


{% test scd_end_not_before_start(model, start_column='valid_start_date', end_column='valid_end_date') %}
{# 4. No row ends before it starts. #}
select
    {{ start_column }} as valid_start_date,
    {{ end_column }} as valid_end_date
from {{ model }}
where {{ end_column }} < {{ start_column }}
{% endtest %}
