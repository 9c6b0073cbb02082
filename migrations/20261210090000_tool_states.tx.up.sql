-- Per-tool re-approval (docs/WEB.md, "When a server changes a tool").
--
-- Each element of mcp_servers.tools may now carry, besides the approved
-- snapshot: serverDescription (the server's own description of the
-- approved definition; the schema and annotations were always stored),
-- state ('changed' or 'gone'; absent means pinned) and live (a changed
-- tool's definition as the server last listed it: description,
-- inputSchema, annotations). Rows stored before carry none of them: they
-- load as pinned tools without a stored server definition, and the next
-- discovery or review sets their state.
ALTER TABLE mcp_servers ADD CONSTRAINT mcp_servers_tools_state_check
    CHECK (jsonb_path_query_array(tools, '$[*].state') <@ '["changed", "gone"]'::jsonb);

-- listed_tools: the names the server listed at its last successful
-- discovery or allowlist save ("new on the server" is what is listed and
-- not allowlisted); NULL when none was recorded.
ALTER TABLE mcp_servers ADD COLUMN listed_tools jsonb
    CHECK (listed_tools IS NULL OR jsonb_typeof(listed_tools) = 'array');
