// Package migrations holds the SQL migrations of the CodeLotse database,
// embedded in the binary and applied by bun/migrate.
//
// Files are named YYYYMMDDHHMMSS_name.tx.up.sql with a matching
// .tx.down.sql, each run in its own transaction, or without .tx when a
// statement cannot run in one. A migration that has landed on main is
// listed in shipped.sha256 and never changes again (a fix is a new
// migration, whose version sorts after every shipped one); a new one
// builds and drops indexes CONCURRENTLY (so without .tx) and adds CHECK
// and FOREIGN KEY constraints NOT VALID, validated in a later one, so a
// large installation is not locked for the length of a scan. The
// package's tests hold these rules. The migrations create the
// tenant tables with forced row-level security and the cluster-wide NOLOGIN
// role codelotse_tenant that tenant-scoped queries run as.
package migrations

import (
	"embed"

	"github.com/uptrace/bun/migrate"
)

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS

// New returns the migrations found in [FS]. It panics if a file name does
// not follow the naming scheme, which the package's tests rule out.
func New() *migrate.Migrations {
	m := migrate.NewMigrations()
	if err := m.Discover(FS); err != nil {
		panic("migrations: " + err.Error())
	}
	return m
}
