-- The limits on live listings (CONTRACT §8, Throttling).
--
-- A connection test of a registered server takes the discovery's claim
-- (at most one live listing per server every 10 s): the claim moves from
-- last_discovery_at, which views show as lastDiscoveryAt, to
-- last_listing_at, which both take; a discovery still sets
-- last_discovery_at with it, a test does not (a test stores nothing a
-- view shows).
ALTER TABLE mcp_servers ADD COLUMN last_listing_at timestamptz;
UPDATE mcp_servers SET last_listing_at = last_discovery_at;

-- The count behind the limit on connection tests of unsaved servers
-- (POST /v1/mcp/servers/test: at most 6 a minute per tenant, CONTRACT
-- §8). One row per counted test, stamped by the database's clock, so
-- every API replica shares one count. A claim takes a per-tenant
-- advisory lock, deletes the tenant's rows that left the window and
-- counts the rest: a tenant never holds more rows than its limit.
CREATE TABLE mcp_connection_tests (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    tested_at timestamptz NOT NULL
);
CREATE INDEX mcp_connection_tests_tenant_idx ON mcp_connection_tests (tenant_id, tested_at);

ALTER TABLE mcp_connection_tests ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_connection_tests FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mcp_connection_tests
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON mcp_connection_tests TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
GRANT SELECT, INSERT, DELETE ON mcp_connection_tests TO codelotse_tenant;
