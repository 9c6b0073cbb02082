-- The tenant-owned schema. Every table has forced row-level security with
-- two policies:
--
--   tenant_isolation  rows of the tenant named by app.tenant_id, which
--                     WithTenant sets with set_config(..., true); no rows
--                     when the setting is missing or empty.
--   system_access     only for the migrating role (the owner, which is also
--                     the role the service connects as) and only while
--                     WithSystem has set app.system; codelotse_tenant is not
--                     a member of the owner, so it can never use it.
--
-- Foreign keys between tenant tables include tenant_id, so a row can never
-- point at another tenant's row.

CREATE TABLE tenants (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name           text NOT NULL,
    retention_days integer NOT NULL DEFAULT 90 CHECK (retention_days > 0),
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a token is stored; the token is shown once.
CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    permissions  text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
CREATE INDEX api_tokens_tenant_id_idx ON api_tokens (tenant_id);

CREATE TABLE repositories (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       text NOT NULL,
    visibility text NOT NULL CHECK (visibility IN ('private', 'internal', 'public')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name),
    UNIQUE (tenant_id, id)
);

-- encrypted_credentials is AES-256-GCM under the context mcp_servers:<id>;
-- credential_hint is the only part of a credential that is ever shown.
CREATE TABLE mcp_servers (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id             uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name                  text NOT NULL,
    url                   text NOT NULL,
    enabled               boolean NOT NULL DEFAULT true,
    auth_type             text NOT NULL DEFAULT 'none' CHECK (auth_type IN ('none', 'bearer', 'header')),
    credential_hint       text,
    encrypted_credentials bytea,
    acknowledged_at       timestamptz,
    tools                 jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(tools) = 'array'),
    last_discovery_at     timestamptz,
    last_error            text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name),
    UNIQUE (tenant_id, id)
);

CREATE TABLE review_runs (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    repository_id  uuid NOT NULL,
    status         text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
    title          text NOT NULL DEFAULT '',
    description    text NOT NULL DEFAULT '',
    diff           text NOT NULL DEFAULT '',
    files          jsonb NOT NULL DEFAULT '{}',
    prompt_version text,
    findings       jsonb NOT NULL DEFAULT '[]',
    summary        text NOT NULL DEFAULT '',
    stats          jsonb NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    finished_at    timestamptz,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, repository_id) REFERENCES repositories (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX review_runs_repository_idx ON review_runs (repository_id, created_at DESC);
CREATE INDEX review_runs_retention_idx ON review_runs (tenant_id, created_at);

-- One row per tool call: sizes, duration and the SHA-256 of the arguments,
-- never the arguments or the output (MC12).
CREATE TABLE mcp_tool_calls (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    server_id      uuid NOT NULL,
    review_id      uuid,
    tool           text NOT NULL,
    status         text NOT NULL CHECK (status IN ('ok', 'error', 'blocked', 'too_large', 'unavailable', 'budget_exhausted', 'invalid_arguments')),
    duration_ms    integer NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
    request_bytes  integer NOT NULL DEFAULT 0 CHECK (request_bytes >= 0),
    response_bytes integer NOT NULL DEFAULT 0 CHECK (response_bytes >= 0),
    arguments_hash text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, server_id) REFERENCES mcp_servers (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, review_id) REFERENCES review_runs (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_tool_calls_server_idx ON mcp_tool_calls (server_id, created_at DESC);
CREATE INDEX mcp_tool_calls_review_idx ON mcp_tool_calls (review_id);
CREATE INDEX mcp_tool_calls_retention_idx ON mcp_tool_calls (tenant_id, created_at);

-- servers cannot carry a foreign key (an array); the application accepts
-- only ids it reads inside the tenant, and RLS hides every other tenant's.
CREATE TABLE tenant_mcp_defaults (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    mode       text NOT NULL DEFAULT 'off' CHECK (mode IN ('on', 'off')),
    servers    uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(servers) <= 5),
    max_calls  integer NOT NULL DEFAULT 5 CHECK (max_calls BETWEEN 1 AND 20),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE repository_policies (
    repository_id uuid PRIMARY KEY,
    tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    mode          text NOT NULL DEFAULT 'inherit' CHECK (mode IN ('on', 'off', 'inherit')),
    servers       uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(servers) <= 5),
    max_calls     integer NOT NULL DEFAULT 5 CHECK (max_calls BETWEEN 1 AND 20),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, repository_id) REFERENCES repositories (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE audit_events (
    id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    action    text NOT NULL,
    actor     text NOT NULL,
    target    text NOT NULL DEFAULT '',
    details   jsonb NOT NULL DEFAULT '{}',
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_tenant_at_idx ON audit_events (tenant_id, at DESC);

-- Row-level security. tenants is keyed by id, every other table by tenant_id.
DO $$
DECLARE
    t   text;
    col text;
BEGIN
    FOREACH t IN ARRAY ARRAY['tenants', 'api_tokens', 'repositories', 'mcp_servers', 'review_runs',
                             'mcp_tool_calls', 'tenant_mcp_defaults', 'repository_policies', 'audit_events']
    LOOP
        col := CASE WHEN t = 'tenants' THEN 'id' ELSE 'tenant_id' END;
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
            USING (%I = nullif(current_setting('app.tenant_id', true), '')::uuid)
            WITH CHECK (%I = nullif(current_setting('app.tenant_id', true), '')::uuid)$p$, t, col, col);
        EXECUTE format($p$CREATE POLICY system_access ON %I TO CURRENT_USER
            USING (current_setting('app.system', true) = 'on')
            WITH CHECK (current_setting('app.system', true) = 'on')$p$, t);
    END LOOP;
END
$$;

-- Privileges of the tenant role. Tenants are created and deleted, and
-- expired rows removed, only on the system path; tool calls and audit
-- events are append-only for tenants.
DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO codelotse_tenant', current_schema()); END $$;
GRANT SELECT, UPDATE ON tenants TO codelotse_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON api_tokens, repositories, mcp_servers, review_runs,
    tenant_mcp_defaults, repository_policies TO codelotse_tenant;
GRANT SELECT, INSERT ON mcp_tool_calls, audit_events TO codelotse_tenant;
