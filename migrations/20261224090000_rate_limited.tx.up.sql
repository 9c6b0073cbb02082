-- A call a server rate-limited (its own 429, or a wait it asked for) is
-- recorded rate_limited. The CHECK is replaced NOT VALID, so the table is
-- not scanned under the lock; the next migration validates it.
ALTER TABLE mcp_tool_calls
    DROP CONSTRAINT mcp_tool_calls_status_check,
    ADD CONSTRAINT mcp_tool_calls_status_check
        CHECK (status IN ('ok', 'error', 'blocked', 'too_large', 'unavailable', 'budget_exhausted', 'invalid_arguments', 'rate_limited')) NOT VALID;
