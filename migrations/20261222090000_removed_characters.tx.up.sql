-- The invisible characters removed from a tool result before the model
-- read it (MC3): a count, like the other columns, never the characters.
ALTER TABLE mcp_tool_calls
    ADD COLUMN removed_characters integer NOT NULL DEFAULT 0 CHECK (removed_characters >= 0);
