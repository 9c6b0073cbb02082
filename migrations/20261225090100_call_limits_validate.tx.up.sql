-- Validates the CHECK of the previous migration: a scan under SHARE
-- UPDATE EXCLUSIVE, which blocks neither reads nor writes.
ALTER TABLE mcp_servers VALIDATE CONSTRAINT mcp_servers_max_calls_per_minute_check;
