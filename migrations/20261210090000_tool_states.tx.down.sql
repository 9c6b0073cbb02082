-- The older code ignores the new keys of the tools elements; a changed
-- tool stays blocked there as long as its live hash differs.
ALTER TABLE mcp_servers DROP COLUMN IF EXISTS listed_tools;
ALTER TABLE mcp_servers DROP CONSTRAINT IF EXISTS mcp_servers_tools_state_check;
