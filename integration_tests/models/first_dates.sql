-- The host's own first_dates (each account's first order), named as one of
-- the package's tables.
select
    'acme' as account_id,
    date'2024-01-01' as first_order_date
