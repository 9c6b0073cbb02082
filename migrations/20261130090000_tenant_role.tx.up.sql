-- codelotse_tenant is the role every tenant-scoped query runs as: WithTenant
-- does SET LOCAL ROLE codelotse_tenant, so forced row-level security holds
-- whatever role the DSN names (a superuser on a development machine too).
-- It must never log in, be superuser, bypass RLS or own a table.
--
-- Roles are cluster-wide: several databases of one cluster share this role
-- (one database per test package, staging next to production) and may
-- migrate at the same moment, so a concurrent CREATE or GRANT is tolerated.
--
-- An operator may create the role beforehand and grant it to the
-- migrating role (README.md, "The database role"): then the migrating role
-- needs no CREATEROLE, so neither step is attempted when already done.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'codelotse_tenant') THEN
        BEGIN
            CREATE ROLE codelotse_tenant NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- created by a concurrent migration of another database
        END;
    END IF;

    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'codelotse_tenant' AND (rolsuper OR rolbypassrls)) THEN
        RAISE EXCEPTION 'role codelotse_tenant exists with SUPERUSER or BYPASSRLS; row-level security would not hold';
    END IF;

    -- The migrating role (the one the service connects as) needs membership
    -- to SET ROLE. A superuser may SET ROLE to any role without it.
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'codelotse_tenant', 'MEMBER') THEN
        BEGIN
            GRANT codelotse_tenant TO CURRENT_USER;
        EXCEPTION WHEN unique_violation THEN
            NULL; -- granted by a concurrent migration of another database
        END;
    END IF;
END
$$;
