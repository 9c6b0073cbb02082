DROP POLICY IF EXISTS tenant_enqueue ON river_job;
ALTER TABLE river_job DISABLE ROW LEVEL SECURITY;
REVOKE USAGE ON SEQUENCE river_job_id_seq FROM codelotse_tenant;
REVOKE ALL ON river_job FROM codelotse_tenant;
