GRANT SELECT, UPDATE ON tenants TO codelotse_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON api_tokens TO codelotse_tenant;
