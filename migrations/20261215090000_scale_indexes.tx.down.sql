DROP INDEX IF EXISTS web_sessions_created_idx;
DROP INDEX IF EXISTS review_runs_repository_recent_idx;
CREATE INDEX IF NOT EXISTS review_runs_repository_idx ON review_runs (repository_id, created_at DESC);
DROP INDEX IF EXISTS mcp_tool_calls_review_order_idx;
CREATE INDEX IF NOT EXISTS mcp_tool_calls_review_idx ON mcp_tool_calls (review_id);
DROP INDEX IF EXISTS mcp_tool_calls_server_recent_idx;
CREATE INDEX IF NOT EXISTS mcp_tool_calls_server_idx ON mcp_tool_calls (server_id, created_at DESC);
