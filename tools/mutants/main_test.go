package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCatalogueApplies runs in make test, so a change that moves or
// rewrites a control fails at once instead of leaving its mutant unable
// to apply: every mutant's find text occurs exactly once in its file.
func TestCatalogueApplies(t *testing.T) {
	muts, err := load("catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(muts) == 0 {
		t.Fatal("the catalogue is empty")
	}
	for _, m := range muts {
		src, err := os.ReadFile(filepath.Join("..", "..", m.File))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		if n := bytes.Count(src, []byte(m.Find)); n != 1 {
			t.Errorf("%s: the find text occurs %d times in %s, want once", m.ID, n, m.File)
		}
	}
}

func TestLoadRefusesABadCatalogue(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field": `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"y","package":"./p","extra":1}]`,
		"missing field": `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"y"}]`,
		"no change":     `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"x","package":"./p"}]`,
		"duplicate id": `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"y","package":"./p"},` +
			`{"id":"a","row":"MC4","what":"w","file":"f","find":"z","replace":"y","package":"./p"}]`,
	} {
		p := filepath.Join(dir, "c.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := load(p); err == nil {
			t.Errorf("%s: load accepted %s", name, body)
		}
	}
}
