-- OAuth for MCP servers (docs/threat-model.md, OAuth rows).
--
-- mcp_servers gets the two OAuth credential kinds and auth_public: the
-- public part of an OAuth credential (client id, scopes, token URL,
-- issuer, who connected and when), which views show. Every secret (client
-- secret, refresh token) stays inside encrypted_credentials, sealed under
-- mcp_servers:<id> like the static credentials.
ALTER TABLE mcp_servers DROP CONSTRAINT mcp_servers_auth_type_check;
ALTER TABLE mcp_servers
    ADD CONSTRAINT mcp_servers_auth_type_check
        CHECK (auth_type IN ('none', 'bearer', 'header', 'oauth_client_credentials', 'oauth_authorization_code')),
    ADD COLUMN auth_public jsonb CHECK (auth_public IS NULL OR jsonb_typeof(auth_public) = 'object');

-- Pending connections of the code flow, between the redirect to the
-- authorization server and its callback: at most 10 minutes, used once
-- (the callback deletes the row it reads). The state is kept as its
-- SHA-256 only, bound to the web session that started it (the SHA-256 of
-- the session's id hash); the PKCE verifier and a dynamically registered
-- client's id and secret are sealed under oauth_state:<hex state hash>.
-- The authorization server's endpoints are pinned here at the start, so
-- the code goes to the token endpoint discovery found, nowhere else.
-- credential_hash is the SHA-256 of the server's encrypted credential at
-- the start: the callback stores the connection only if it is unchanged.
-- The key rotation does not re-seal these rows: they live 10 minutes, and
-- one that no key opens any more is refused like an expired one.
CREATE TABLE oauth_connect_states (
    state_hash             bytea PRIMARY KEY CHECK (octet_length(state_hash) = 32),
    tenant_id              uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    server_id              uuid NOT NULL,
    session_hash           bytea NOT NULL CHECK (octet_length(session_hash) = 32),
    sealed                 bytea NOT NULL,
    credential_hash        bytea NOT NULL CHECK (octet_length(credential_hash) = 32),
    issuer                 text NOT NULL,
    authorization_endpoint text NOT NULL,
    token_endpoint         text NOT NULL,
    iss_supported          boolean NOT NULL,
    redirect_uri           text NOT NULL,
    created_at             timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL,
    CHECK (expires_at > created_at),
    FOREIGN KEY (tenant_id, server_id) REFERENCES mcp_servers (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_connect_states_expiry_idx ON oauth_connect_states (tenant_id, expires_at);
CREATE INDEX oauth_connect_states_server_idx ON oauth_connect_states (server_id);

ALTER TABLE oauth_connect_states ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_connect_states FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON oauth_connect_states
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON oauth_connect_states TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
GRANT SELECT, INSERT, DELETE ON oauth_connect_states TO codelotse_tenant;
