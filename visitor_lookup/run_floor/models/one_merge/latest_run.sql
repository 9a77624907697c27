-- One row: when the latest run ran. Every run merges it into the table.
{{
    config(
        materialized='incremental',
        file_format=var('run_floor__file_format'),
        incremental_strategy='merge',
        unique_key='row_id',
    )
}}

select
    1 as row_id,
    current_timestamp() as ran_at
