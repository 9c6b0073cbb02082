DROP TABLE IF EXISTS audit_events, repository_policies, tenant_mcp_defaults, mcp_tool_calls,
    review_runs, mcp_servers, repositories, api_tokens, tenants;
DO $$ BEGIN EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM codelotse_tenant', current_schema()); END $$;
