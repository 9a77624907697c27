-- The host's own user_mapping (its CRM's users and their accounts), named as
-- one of the package's tables: the two live side by side, in their schemas.
select
    'u1' as user_id,
    'acme' as account_id
