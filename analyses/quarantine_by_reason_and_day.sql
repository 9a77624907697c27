-- What the quarantine holds, by reason and by the day events reached the
-- warehouse: a sudden rise points at a broken tracker or loader.
with quarantined as (
    select
        invalid_reason,
        loaded_at
    from {{ ref('visitor_lookup', 'quarantined_events') }}
)

select
    invalid_reason,
    to_date(loaded_at) as loaded_day,
    count(*) as events
from quarantined
group by invalid_reason, to_date(loaded_at)
order by loaded_day asc, events desc
