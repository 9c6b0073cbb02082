package postgres_test

import (
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestEveryTableHasForcedRLS reads the catalogue instead of a list, so a
// table added later without row-level security fails here. Only the
// migration bookkeeping and the job queue's tables are exempt: they hold
// no tenant data (a job carries ids only) and the tenant role cannot read
// them.
func TestEveryTableHasForcedRLS(t *testing.T) {
	db := pgtest.New(t)
	rows, err := db.Bun().QueryContext(t.Context(), `
		SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
		       has_table_privilege('codelotse_tenant', c.oid, 'SELECT')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	exempt := map[string]bool{"bun_migrations": true, "bun_migration_locks": true}
	seen := 0
	for rows.Next() {
		var name string
		var rls, force, tenantReads bool
		if err := rows.Scan(&name, &rls, &force, &tenantReads); err != nil {
			t.Fatal(err)
		}
		seen++
		if exempt[name] || len(name) > 6 && name[:6] == "river_" {
			if tenantReads && name != "river_job" {
				t.Errorf("the tenant role can read %s", name)
			}
			continue
		}
		if !rls || !force {
			t.Errorf("table %s: row level security %v, forced %v; want both", name, rls, force)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < 9 {
		t.Errorf("saw %d tables, want the schema's", seen)
	}
}
