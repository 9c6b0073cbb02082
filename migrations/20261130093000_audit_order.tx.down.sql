DROP INDEX audit_events_tenant_at_idx;
ALTER TABLE audit_events DROP COLUMN seq;
CREATE INDEX audit_events_tenant_at_idx ON audit_events (tenant_id, at DESC);
