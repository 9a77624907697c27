{#-
    The four invariants of a type-2 table (spec §4), and no NULL in the
    not_null columns, in one query: a table is read once, where a test per
    invariant read it four times (docs/performance.md). Returns every row
    that breaks one, with what it breaks; any row fails the test.
-#}

{% test scd_invariants(
    model, key, start_column='valid_start_date', end_column='valid_end_date', current_column='is_current', not_null=[]
) %}
with scd_rows as (
    select
        {{ key }} as scd_key,
        {{ start_column }} as valid_start_date,
        {{ end_column }} as valid_end_date,
        {{ current_column }} as is_current,
        {{ visitor_lookup_null_columns(not_null) }} as null_columns
    from {{ model }}
),

rows_beside_neighbours as (
    select
        scd_key,
        valid_start_date,
        valid_end_date,
        is_current,
        null_columns,
        row_number() over (partition by scd_key order by valid_start_date) as position,
        lag(valid_start_date) over (partition by scd_key order by valid_start_date) as previous_start,
        lag(valid_end_date) over (partition by scd_key order by valid_start_date) as previous_end,
        count_if(is_current) over (partition by scd_key) as current_rows
    from scd_rows
),

checked_rows as (
    select
        scd_key,
        valid_start_date,
        valid_end_date,
        is_current,
        previous_end,
        current_rows,
        -- 1. within a key, each row starts 1 microsecond after the previous row ends
        position > 1
        and (previous_end is null or valid_start_date != previous_end + interval 1 microsecond) as breaks_start_lag,
        -- 2. exactly one current row per key
        current_rows != 1 as breaks_one_current_row,
        -- 3. no key has two rows starting at the same instant (they sort next to each other)
        position > 1 and previous_start <=> valid_start_date as breaks_distinct_starts,
        -- 4. no row ends before it starts
        coalesce(valid_end_date < valid_start_date, false) as breaks_no_negative_span,
        null_columns
    from rows_beside_neighbours
)

select
    scd_key,
    valid_start_date,
    valid_end_date,
    is_current,
    previous_end,
    current_rows,
    concat_ws(
        ', ',
        case when breaks_start_lag then 'start lag' end,
        case when breaks_one_current_row then 'one current row' end,
        case when breaks_distinct_starts then 'distinct starts' end,
        case when breaks_no_negative_span then 'no negative span' end,
        nullif(null_columns, '')
    ) as broken_invariants
from checked_rows
where
    breaks_start_lag or breaks_one_current_row or breaks_distinct_starts or breaks_no_negative_span
    or null_columns != ''
{% endtest %}
