-- The rows of the cookies the latest run named whose column_name is null: one read of the table with
-- the run's cookies broadcast, the least an exact run's check of the rows it changed reads.
{% test run_cookie_rows_not_null(model, column_name) %}

    with run_cookies as (
        select distinct visitor_cookie_id
        from {{ ref('exact_run_events') }}
        where loaded_at > timestamp '{{ var("run_floor__loaded_after") }}'
    ),

    rows_of_run_cookies as (
        select /*+ broadcast(run_cookies) */ stored_rows.{{ column_name }}
        from {{ model }} as stored_rows
        left semi join run_cookies
            on stored_rows.visitor_cookie_id = run_cookies.visitor_cookie_id
    )

    select {{ column_name }}
    from rows_of_run_cookies
    where {{ column_name }} is null

{% endtest %}
