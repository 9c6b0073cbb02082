-- The audit stream's outbox. With QUAVON_AUDIT_WEBHOOK_URL set, every
-- audit event and every call record is written here too, in the
-- transaction that stores it, as the payload-free data of its CloudEvent;
-- the worker delivers a tenant's entries in seq order and deletes each
-- once the sink answered 2xx (at least once: an entry keeps its id, which
-- a receiver deduplicates on). attempts and next_attempt_at (NULL: at
-- once) hold the backoff of the tenant's first entry, which holds back
-- the rest.
-- Retention deletes entries older than the tenant's retention_days.
CREATE TABLE audit_outbox (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq             bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    type            text NOT NULL CHECK (type IN ('audit', 'call')),
    occurred_at     timestamptz NOT NULL,
    data            jsonb NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_error      text NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX audit_outbox_tenant_seq_idx ON audit_outbox (tenant_id, seq);
CREATE INDEX audit_outbox_tenant_occurred_idx ON audit_outbox (tenant_id, occurred_at);

ALTER TABLE audit_outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_outbox
    USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY system_access ON audit_outbox TO CURRENT_USER
    USING (current_setting('app.system', true) = 'on')
    WITH CHECK (current_setting('app.system', true) = 'on');
-- A tenant transaction only adds entries; delivery runs in system scope.
GRANT INSERT ON audit_outbox TO codelotse_tenant;
