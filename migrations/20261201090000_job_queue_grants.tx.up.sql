-- The job queue. River's own tables (river_job, river_queue, river_leader,
-- river_migration, …) are created by River's migrations, which Migrate
-- applies before these files; they belong to the migrating role like every
-- other table.
--
-- A review request stores its run and enqueues its job in one tenant
-- transaction, which runs as codelotse_tenant. The role gets exactly what
-- River's insert needs on river_job and nothing on River's other tables:
--
--   INSERT            the job row;
--   SELECT            RETURNING river_job.* and the ON CONFLICT clause;
--   UPDATE (kind)     ON CONFLICT (unique_key) DO UPDATE SET kind = kind,
--                     which PostgreSQL checks whether or not a conflict
--                     happens (review jobs are not unique);
--   USAGE on the id sequence, for nextval.
--
-- pg_notify, the river_job_state type and river_job_state_in_bitmask need
-- no grant (PUBLIC may use them).
--
-- river_job is not tenant-scoped, so row-level security limits the tenant
-- role to jobs whose args name its own tenant: it can neither read nor
-- create another tenant's jobs. The policy is enabled, not forced: the
-- owner (River's workers, the connecting role) is not subject to it.
GRANT SELECT, INSERT ON river_job TO codelotse_tenant;
GRANT UPDATE (kind) ON river_job TO codelotse_tenant;
GRANT USAGE ON SEQUENCE river_job_id_seq TO codelotse_tenant;

ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_enqueue ON river_job TO codelotse_tenant
    USING (args ->> 'tenantId' = nullif(current_setting('app.tenant_id', true), ''))
    WITH CHECK (args ->> 'tenantId' = nullif(current_setting('app.tenant_id', true), ''));
