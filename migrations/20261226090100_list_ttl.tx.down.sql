ALTER TABLE mcp_servers DROP COLUMN IF EXISTS list_ttl_ms;
