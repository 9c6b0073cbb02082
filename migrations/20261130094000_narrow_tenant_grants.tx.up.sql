-- The tenant role needs neither the API tokens (looked up and created on
-- the system path only) nor write access to the tenants table (the
-- server-count check uses an advisory lock). A bug in a tenant-scoped
-- query can then neither read token hashes nor mint tokens.
REVOKE ALL ON api_tokens FROM codelotse_tenant;
REVOKE INSERT, UPDATE, DELETE ON tenants FROM codelotse_tenant;
