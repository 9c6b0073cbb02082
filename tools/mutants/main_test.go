package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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
		"dir outside":   `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"y","package":"./p","dir":"../elsewhere"}]`,
		"dir absolute":  `[{"id":"a","row":"MC4","what":"w","file":"f","find":"x","replace":"y","package":"./p","dir":"/tmp"}]`,
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

// TestLoadReadsDirAndEquivalent: the optional fields reach the mutant.
func TestLoadReadsDirAndEquivalent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	body := `[{"id":"a","row":"MC10","what":"w","file":"deploy/x.tpl","find":"x","replace":"y","package":"./helm/","dir":"deploy","equivalent":"the same render"},` +
		`{"id":"b","row":"MC4","what":"w","file":"f.go","find":"x","replace":"y","package":"./p"}]`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	muts, err := load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(muts) != 2 || muts[0].Dir != "deploy" || muts[0].Equivalent != "the same render" || muts[1].Dir != "" || muts[1].Equivalent != "" {
		t.Errorf("load = %+v, want dir and equivalent on the first mutant only", muts)
	}
}

// TestReportCountsEquivalentApart: an equivalent mutant fails no run,
// a survivor and a broken mutant do.
func TestReportCountsEquivalentApart(t *testing.T) {
	ok := []result{{m: Mutant{ID: "a", Row: "MC1"}, outcome: "killed"}, {m: Mutant{ID: "b", Row: "MC1", Equivalent: "why"}, outcome: "equivalent"}}
	if err := report(ok); err != nil {
		t.Errorf("killed and equivalent: %v, want no error", err)
	}
	for _, bad := range []string{"survived", "broken"} {
		if err := report(append(ok, result{m: Mutant{ID: "c", Row: "MC2"}, outcome: bad})); err == nil || !strings.Contains(err.Error(), "c") {
			t.Errorf("a %s mutant: %v, want an error naming it", bad, err)
		}
	}
}

// TestRunRoundTrip: the results a full run writes are read back as
// written, and a results file with a field this tool does not know is
// refused rather than half read.
func TestRunRoundTrip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "results.json")
	want := Run{Commit: "abc", Dirty: true, Date: "2026-12-02T00:00:00Z", Outcomes: map[string]string{"a": "killed", "b": "survived"}}
	if err := writeRun(file, want); err != nil {
		t.Fatal(err)
	}
	got, err := readRun(file)
	if err != nil || got.Commit != want.Commit || got.Dirty != want.Dirty || got.Date != want.Date || len(got.Outcomes) != 2 || got.Outcomes["b"] != "survived" {
		t.Errorf("readRun = %+v, %v; want %+v", got, err, want)
	}
	if m := got.missing([]Mutant{{ID: "a"}, {ID: "c"}}); len(m) != 1 || m[0] != "c" {
		t.Errorf("missing = %v, want [c]", m)
	}
	if err := os.WriteFile(file, []byte(`{"commit":"x","extra":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readRun(file); err == nil {
		t.Error("a results file with an unknown field was read")
	}
}
