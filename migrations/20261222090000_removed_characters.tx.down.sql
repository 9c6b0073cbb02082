ALTER TABLE mcp_tool_calls DROP COLUMN IF EXISTS removed_characters;
