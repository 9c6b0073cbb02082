-- Tenant settings (retention, debug prompt logs) and the debug prompt logs.
--
-- The settings are columns of tenants. The tenant role may update exactly
-- these columns of its own row (row-level security), nothing else of the
-- table; the column grant also lets it read its row FOR SHARE, which the
-- prompt-log writer does so that turning the logs off cannot race a write.
ALTER TABLE tenants
    ADD COLUMN debug_prompts_enabled   boolean NOT NULL DEFAULT false,
    ADD COLUMN debug_prompts_ttl_hours integer NOT NULL DEFAULT 24 CHECK (debug_prompts_ttl_hours BETWEEN 1 AND 168),
    ADD CONSTRAINT tenants_retention_days_range CHECK (retention_days BETWEEN 1 AND 3650);
GRANT UPDATE (retention_days, debug_prompts_enabled, debug_prompts_ttl_hours) ON tenants TO codelotse_tenant;

-- One row per model request of a review while the tenant keeps debug
-- prompt logs: the messages, redacted by the secret scanner and sealed
-- with AES-256-GCM under the associated data prompt_logs:<review id> (the
-- key id framed and authenticated in the ciphertext). step and turn are
-- not secret. A row lives until expires_at (written + the tenant's TTL),
-- at most the tenant's retention; turning the setting off deletes them.
CREATE TABLE prompt_logs (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    review_id  uuid NOT NULL,
    step       text NOT NULL CHECK (step IN ('finder', 'verifier', 'summary')),
    turn       integer NOT NULL CHECK (turn >= 1),
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    CHECK (expires_at > created_at),
    FOREIGN KEY (tenant_id, review_id) REFERENCES review_runs (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX prompt_logs_review_idx ON prompt_logs (review_id, seq);
CREATE INDEX prompt_logs_expiry_idx ON prompt_logs (expires_at);
CREATE INDEX prompt_logs_retention_idx ON prompt_logs (tenant_id, created_at);

ALTER TABLE prompt_logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE prompt_logs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON prompt_logs
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON prompt_logs TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
GRANT SELECT, INSERT, DELETE ON prompt_logs TO codelotse_tenant;
