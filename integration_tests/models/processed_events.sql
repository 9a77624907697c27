-- The host's own processed_events (its order events), named as one of the
-- package's tables.
select
    'o1' as order_id,
    'acme' as account_id
