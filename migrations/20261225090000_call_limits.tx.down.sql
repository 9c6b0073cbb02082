DROP TABLE IF EXISTS mcp_call_minutes;
ALTER TABLE mcp_servers DROP COLUMN IF EXISTS max_calls_per_minute;
