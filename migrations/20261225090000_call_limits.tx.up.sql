-- A server's limit of tool calls per minute across reviews (MC8): the
-- admin's maxCallsPerMinute, NULL for none. The CHECK is added NOT VALID,
-- so the table is not scanned under the lock; the next migration
-- validates it.
ALTER TABLE mcp_servers ADD COLUMN max_calls_per_minute smallint;
ALTER TABLE mcp_servers ADD CONSTRAINT mcp_servers_max_calls_per_minute_check
    CHECK (max_calls_per_minute BETWEEN 1 AND 600) NOT VALID;

-- The count behind the limit: the calls of a server in one minute of the
-- database's clock, so every worker replica shares one count. A call
-- takes its minute's row in one INSERT … ON CONFLICT DO UPDATE that adds
-- one only below the limit, and deletes the server's earlier minutes: a
-- server holds a row or two. The row goes with its server.
CREATE TABLE mcp_call_minutes (
    tenant_id uuid NOT NULL,
    server_id uuid NOT NULL,
    minute    timestamptz NOT NULL,
    calls     integer NOT NULL CHECK (calls > 0),
    PRIMARY KEY (server_id, minute),
    FOREIGN KEY (tenant_id, server_id) REFERENCES mcp_servers (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE mcp_call_minutes ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_call_minutes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mcp_call_minutes
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON mcp_call_minutes TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_call_minutes TO codelotse_tenant;
