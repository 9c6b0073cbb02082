-- Indexes that match, tie-break included, the ORDER BY of every list the
-- store pages (issue 22), so that a page reads its rows in index order
-- and stops at its LIMIT however many rows the tenant has:
--
--   calls of a server, newest first   WHERE tenant_id, server_id ORDER BY created_at DESC, id DESC
--   calls of a review, oldest first   WHERE tenant_id, review_id ORDER BY created_at, id
--   reviews of a repository           WHERE tenant_id, repository_id ORDER BY created_at DESC, id DESC
--
-- tenant_id leads because every query names it too: with an index on the
-- server alone, the planner combined it with the tenant's (tenant_id,
-- created_at) index for a server of average size (a bitmap AND over all
-- of a big tenant's calls, then a sort), 20 to 50 ms instead of 0.2.
-- Each replaces the index whose columns it extends; the foreign keys
-- (tenant_id, server_id), (tenant_id, review_id) and (tenant_id,
-- repository_id) cascade through the new ones. The audit log (tenant_id, at DESC,
-- seq DESC), the repositories (tenant_id, name), the prompt logs
-- (review_id, seq) and the key rotation (id) already had theirs; the
-- retention job uses the (tenant_id, created_at) and (tenant_id, at)
-- indexes and, for prompt logs past their TTL, (expires_at).
--
-- Web sessions expire by created_at (8 h) or last_seen_at (30 min idle);
-- the sweep at sign-in needs an index for each side of its OR.
--
-- CREATE INDEX without CONCURRENTLY (each migration is one transaction)
-- blocks writes to its table while it builds: docs/operations-retention.md
-- gives the time on a large installation.
DROP INDEX mcp_tool_calls_server_idx;
CREATE INDEX mcp_tool_calls_server_recent_idx ON mcp_tool_calls (tenant_id, server_id, created_at DESC, id DESC);
DROP INDEX mcp_tool_calls_review_idx;
CREATE INDEX mcp_tool_calls_review_order_idx ON mcp_tool_calls (tenant_id, review_id, created_at, id);
DROP INDEX review_runs_repository_idx;
CREATE INDEX review_runs_repository_recent_idx ON review_runs (tenant_id, repository_id, created_at DESC, id DESC);
CREATE INDEX web_sessions_created_idx ON web_sessions (created_at);
