package migrations_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/migrations"
)

var nameRE = regexp.MustCompile(`^(\d{14})_([a-z0-9_]+)(?:\.tx)?\.(up|down)\.sql$`)

func TestFileNames(t *testing.T) {
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no migrations embedded")
	}
	type pair struct{ name, up, down string }
	versions := map[string]*pair{}
	for _, f := range files {
		m := nameRE.FindStringSubmatch(f)
		if m == nil {
			t.Errorf("%s: want YYYYMMDDHHMMSS_name[.tx].up.sql or [.tx].down.sql", f)
			continue
		}
		p := versions[m[1]]
		if p == nil {
			p = &pair{name: m[2]}
			versions[m[1]] = p
		}
		if p.name != m[2] {
			t.Errorf("version %s used by %s_%s and %s_%s", m[1], m[1], p.name, m[1], m[2])
		}
		if m[3] == "up" {
			p.up = f
		} else {
			p.down = f
		}
	}
	for v, p := range versions {
		if p.up == "" || p.down == "" {
			t.Errorf("version %s_%s: up %q, down %q; want both", v, p.name, p.up, p.down)
		}
	}
}

func TestNew(t *testing.T) {
	ms := migrations.New().Sorted()
	files, _ := fs.Glob(migrations.FS, "*.up.sql")
	if len(ms) != len(files) {
		t.Fatalf("New() found %d migrations, want %d", len(ms), len(files))
	}
	for _, m := range ms {
		if m.Up == nil || m.Down == nil {
			t.Errorf("migration %s: missing up or down", m)
		}
	}
}

// The migrations are formatted by bun before they are sent, so a question
// mark would be taken for a placeholder.
func TestNoPlaceholders(t *testing.T) {
	files, _ := fs.Glob(migrations.FS, "*.sql")
	for _, f := range files {
		b, _ := fs.ReadFile(migrations.FS, f)
		if strings.Contains(string(b), "?") {
			t.Errorf("%s contains '?', which bun formats as a placeholder", f)
		}
	}
}

// shippedEntry is one line of shipped.sha256.
type shippedEntry struct{ sum, file string }

func readShipped(t *testing.T) []shippedEntry {
	t.Helper()
	b, err := os.ReadFile("shipped.sha256")
	if err != nil {
		t.Fatal(err)
	}
	var out []shippedEntry
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, file, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("shipped.sha256: malformed line %q", line)
		}
		out = append(out, shippedEntry{sum, file})
	}
	return out
}

// TestShippedMigrationsAreUnchanged: an installation has run every
// migration that landed on main, so none may change or disappear; a fix
// is a new migration. The manifest is append-only and in version order.
func TestShippedMigrationsAreUnchanged(t *testing.T) {
	last := ""
	for _, e := range readShipped(t) {
		b, err := fs.ReadFile(migrations.FS, e.file)
		if err != nil {
			t.Errorf("%s: shipped, but not embedded (%v)", e.file, err)
			continue
		}
		if sum := fmt.Sprintf("%x", sha256.Sum256(b)); sum != e.sum {
			t.Errorf("%s: changed after it shipped (sha256 %s, shipped %s): write a new migration instead", e.file, sum, e.sum)
		}
		if v := e.file[:14]; v < last {
			t.Errorf("%s: listed after version %s", e.file, last)
		} else {
			last = v
		}
	}
}

// TestNewMigrationsSortAfterTheShipped: a migration not yet in the
// manifest must sort after every shipped one, or an installation that
// has run the later ones would skip it.
func TestNewMigrationsSortAfterTheShipped(t *testing.T) {
	shipped := map[string]bool{}
	last := ""
	for _, e := range readShipped(t) {
		shipped[e.file] = true
		last = max(last, e.file[:14])
	}
	files, _ := fs.Glob(migrations.FS, "*.sql")
	for _, f := range files {
		if !shipped[f] && f[:14] <= last {
			t.Errorf("%s: new, but its version does not sort after the last shipped one (%s)", f, last)
		}
	}
}

// lockingSQL are statements that, on a large installation, hold a lock
// for as long as they scan or build: an index built or dropped without
// CONCURRENTLY (and CONCURRENTLY cannot run in a transaction), and a
// CHECK or FOREIGN KEY constraint added without NOT VALID (validate it in
// a later migration, which takes a weaker lock).
var lockingSQL = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?is)\b(?:CREATE\s+(?:UNIQUE\s+)?INDEX|DROP\s+INDEX)\s+\w+`), "builds or drops an index without CONCURRENTLY"},
	{regexp.MustCompile(`(?is)\bADD\s+CONSTRAINT\s+\S+\s+(CHECK|FOREIGN\s+KEY)\b[^;]*;`), "adds a constraint that scans the table"},
}

var concurrently = regexp.MustCompile(`(?i)\bCONCURRENTLY\b`)

// TestNewMigrationsLockBriefly: a migration not yet shipped builds its
// indexes CONCURRENTLY outside a transaction (a file without .tx) and
// adds constraints NOT VALID. The shipped ones stay as they ran.
func TestNewMigrationsLockBriefly(t *testing.T) {
	shipped := map[string]bool{}
	for _, e := range readShipped(t) {
		shipped[e.file] = true
	}
	files, _ := fs.Glob(migrations.FS, "*.up.sql")
	for _, f := range files {
		if shipped[f] {
			continue
		}
		b, _ := fs.ReadFile(migrations.FS, f)
		if problems := lockingStatements(string(b), strings.Contains(f, ".tx.")); len(problems) > 0 {
			t.Errorf("%s: %s", f, strings.Join(problems, "; "))
		}
	}
}

// lockingStatements names what in sql would hold a long lock.
func lockingStatements(sql string, inTx bool) []string {
	var out []string
	for _, l := range lockingSQL {
		for _, m := range l.re.FindAllString(sql, -1) {
			if concurrently.MatchString(m) || strings.Contains(strings.ToUpper(m), "NOT VALID") {
				continue
			}
			out = append(out, l.why)
		}
	}
	if inTx && concurrently.MatchString(sql) {
		out = append(out, "uses CONCURRENTLY inside a transaction (name it without .tx)")
	}
	return out
}

func TestLockingStatements(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		inTx bool
		want int
	}{
		{"CREATE INDEX reviews_at ON review_runs (created_at);", true, 1},
		{"CREATE UNIQUE INDEX IF NOT EXISTS x ON t (a);", true, 1},
		{"DROP INDEX reviews_at;", true, 1},
		{"CREATE INDEX CONCURRENTLY reviews_at ON review_runs (created_at);", false, 0},
		{"DROP INDEX CONCURRENTLY IF EXISTS reviews_at;", false, 0},
		{"CREATE INDEX CONCURRENTLY x ON t (a);", true, 1},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0);", true, 1},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0) NOT VALID;", true, 0},
		{"ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u (id);", true, 1},
		{"ALTER TABLE t ADD COLUMN a int;", true, 0},
		{"ALTER TABLE t VALIDATE CONSTRAINT c;", true, 0},
	} {
		if got := lockingStatements(tt.sql, tt.inTx); len(got) != tt.want {
			t.Errorf("lockingStatements(%q, %v) = %v, want %d problems", tt.sql, tt.inTx, got, tt.want)
		}
	}
}
