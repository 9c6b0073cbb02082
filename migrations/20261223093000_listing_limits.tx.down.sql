DROP TABLE IF EXISTS mcp_connection_tests;
ALTER TABLE mcp_servers DROP COLUMN IF EXISTS last_listing_at;
