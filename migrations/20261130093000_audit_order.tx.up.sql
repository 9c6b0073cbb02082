-- Events of one transaction share now(), so "newest first" needs a tie
-- breaker: seq grows with every insert. An identity column needs no grant
-- on its sequence, so codelotse_tenant can still append.
ALTER TABLE audit_events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX audit_events_tenant_at_idx;
CREATE INDEX audit_events_tenant_at_idx ON audit_events (tenant_id, at DESC, seq DESC);
