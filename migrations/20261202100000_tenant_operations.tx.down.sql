DROP TABLE IF EXISTS prompt_logs;
REVOKE UPDATE (retention_days, debug_prompts_enabled, debug_prompts_ttl_hours) ON tenants FROM codelotse_tenant;
ALTER TABLE tenants
    DROP CONSTRAINT IF EXISTS tenants_retention_days_range,
    DROP COLUMN IF EXISTS debug_prompts_ttl_hours,
    DROP COLUMN IF EXISTS debug_prompts_enabled;
