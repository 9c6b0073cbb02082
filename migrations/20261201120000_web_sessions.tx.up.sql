-- Sessions of the web interface (/ui/). A session is opened by signing in
-- with an API token and carries that token's tenant; its permissions are
-- read from the token on every request, so deleting the token ends every
-- session opened with it (ON DELETE CASCADE). Only the SHA-256 of the
-- session cookie is stored, like api_tokens. The service enforces the 8 h
-- lifetime and the 30 min idle timeout from created_at and last_seen_at.
--
-- Sessions, like tokens, are reached only through the system path
-- (WithSystem): forced row-level security with the same two policies as
-- every table, and no privilege at all for codelotse_tenant.
CREATE TABLE web_sessions (
    id_hash      bytea PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    token_id     uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_token_idx ON web_sessions (token_id);
CREATE INDEX web_sessions_last_seen_idx ON web_sessions (last_seen_at);

ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE web_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON web_sessions
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON web_sessions TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
REVOKE ALL ON web_sessions FROM codelotse_tenant;
