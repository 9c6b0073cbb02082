DELETE FROM mcp_tool_calls WHERE status = 'rate_limited';
ALTER TABLE mcp_tool_calls
    DROP CONSTRAINT mcp_tool_calls_status_check,
    ADD CONSTRAINT mcp_tool_calls_status_check
        CHECK (status IN ('ok', 'error', 'blocked', 'too_large', 'unavailable', 'budget_exhausted', 'invalid_arguments')) NOT VALID;
