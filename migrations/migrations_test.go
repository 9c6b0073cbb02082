package migrations_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/migrations"
)

var nameRE = regexp.MustCompile(`^(\d{14})_([a-z0-9_]+)\.tx\.(up|down)\.sql$`)

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
			t.Errorf("%s: want YYYYMMDDHHMMSS_name.tx.up.sql or .tx.down.sql", f)
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
