-- Validates the CHECK of the previous migration: a scan under SHARE
-- UPDATE EXCLUSIVE, which blocks neither reads nor writes.
ALTER TABLE mcp_tool_calls VALIDATE CONSTRAINT mcp_tool_calls_status_check;
