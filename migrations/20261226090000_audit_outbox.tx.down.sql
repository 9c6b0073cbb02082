DROP TABLE IF EXISTS audit_outbox;
