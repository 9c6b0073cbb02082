// Command mutants proves that the tests still catch the removal of each
// control: it applies the hand-written mutants of a catalogue one at a
// time and runs the tests that should fail, reporting per threat-analysis
// row which mutants were killed and which survived.
//
// A mutant is a find-and-replace in one file. It is applied through
// go test's -overlay, so the working tree is never changed and an
// interrupted run leaves nothing behind. The find text must occur exactly
// once in the file, so a refactoring that moves a control makes its
// mutant fail loudly ("not found") instead of silently testing nothing.
// A mutant of a file that is not Go source (a Helm template) cannot be an
// overlay: its dir is copied, mutated and tested in the copy. A mutant
// that no test can tell from the original carries the reason in its
// equivalent field and is reported apart (docs/sign-off.md).
//
//	go run ./tools/mutants [-catalogue tools/mutants/catalogue.json] [-only ID,ID] [-list]
//	go run ./tools/mutants -doc docs/sign-off.md
//
// It exits non-zero when a mutant survives, cannot be applied, or is
// marked equivalent and killed. With -doc it runs nothing: it rewrites
// the doc's generated tables (the counts per row, each row's mutants)
// from the catalogue and leaves its prose alone (doc.go).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Mutant is one catalogue entry.
type Mutant struct {
	// ID names the mutant in reports and -only.
	ID string `json:"id"`
	// Row is the control's row of the threat analysis, a section of
	// docs/sign-off.md (MC1…).
	Row string `json:"row"`
	// What says in words what the mutant removes or weakens.
	What string `json:"what"`
	// File is relative to the repository root.
	File string `json:"file"`
	// Find must occur exactly once in File; Replace takes its place.
	Find    string `json:"find"`
	Replace string `json:"replace"`
	// Package is the go test package pattern that must fail, Run an
	// optional -run regexp, Tags optional build tags.
	Package string `json:"package"`
	Run     string `json:"run,omitempty"`
	Tags    string `json:"tags,omitempty"`
	// Dir is an optional directory, relative to the repository root,
	// that go test runs in (a module of its own, such as deploy); File
	// stays relative to the repository root and Package to Dir.
	Dir string `json:"dir,omitempty"`
	// Equivalent, when set, says why the mutant cannot be told apart
	// from the original by any test (it behaves the same); such a mutant
	// is still applied and run, and reported as equivalent, not as a
	// survivor. A killed mutant marked equivalent is an error in the
	// catalogue.
	Equivalent string `json:"equivalent,omitempty"`
}

type result struct {
	m       Mutant
	outcome string // killed, survived, equivalent, broken
	detail  string
	took    time.Duration
}

func main() {
	catalogue := flag.String("catalogue", "tools/mutants/catalogue.json", "the catalogue of mutants")
	only := flag.String("only", "", "comma-separated mutant IDs to run (default: all)")
	list := flag.Bool("list", false, "list the catalogue and exit")
	doc := flag.String("doc", "", "rewrite this doc's generated tables (docs/sign-off.md) from the catalogue and the results and exit")
	resultsPath := flag.String("results", resultsFile, "the results a full run writes and -doc reads")
	flag.Parse()
	var err error
	if *doc != "" {
		err = generateDoc(*catalogue, *resultsPath, *doc, *only != "" || *list)
	} else {
		err = run(*catalogue, *resultsPath, *only, *list)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

// generateDoc rewrites doc's tables from the whole catalogue and the
// outcomes of the last full run.
func generateDoc(catalogue, results, doc string, otherFlags bool) error {
	if otherFlags {
		return errors.New("-doc renders the whole catalogue: it takes neither -only nor -list")
	}
	muts, err := load(catalogue)
	if err != nil {
		return err
	}
	r, err := readRun(results)
	if err != nil {
		return err
	}
	return writeDoc(doc, muts, r)
}

// run applies the mutants (all, or the -only ones) and reports per row;
// a full run also records every outcome in the results file, survivors
// included, so the sign-off page shows them.
func run(catalogue, results, only string, list bool) error {
	muts, err := load(catalogue)
	if err != nil {
		return err
	}
	if only != "" {
		ids := strings.Split(only, ",")
		muts = slices.DeleteFunc(muts, func(m Mutant) bool { return !slices.Contains(ids, m.ID) })
	}
	if list {
		for _, m := range muts {
			fmt.Printf("%-5s %-32s %s\n", m.Row, m.ID, m.What)
		}
		return nil
	}
	tmp, err := os.MkdirTemp("", "mutants")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The commit and the tree are read before the run: what was tested.
	started := time.Now()
	record := newRun(started)
	var outcomes []result
	for i, m := range muts {
		r := apply(m, tmp)
		fmt.Printf("[%d/%d] %-8s %-5s %-32s %s (%s)\n", i+1, len(muts), r.outcome, m.Row, m.ID, m.What, r.took.Round(time.Second))
		switch r.outcome {
		case "broken":
			fmt.Printf("        %s\n", r.detail)
		case "equivalent":
			fmt.Printf("        equivalent: %s\n", m.Equivalent)
		}
		outcomes = append(outcomes, r)
	}
	if only == "" {
		record.Seconds = int(time.Since(started).Seconds())
		for _, o := range outcomes {
			record.Outcomes[o.m.ID] = o.outcome
		}
		if err := writeRun(results, record); err != nil {
			return err
		}
		fmt.Printf("outcomes written to %s: run %s to render docs/sign-off.md\n", results, docCommand)
	}
	return report(outcomes)
}

// load reads the catalogue and checks that IDs are unique and every
// field is set.
func load(path string) ([]Mutant, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var muts []Mutant
	if err := dec.Decode(&muts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, m := range muts {
		if m.ID == "" || m.Row == "" || m.What == "" || m.File == "" || m.Find == "" || m.Package == "" {
			return nil, fmt.Errorf("%s: mutant %q lacks a field", path, m.ID)
		}
		if m.Dir != "" && (filepath.IsAbs(m.Dir) || strings.HasPrefix(filepath.Clean(m.Dir), "..")) {
			return nil, fmt.Errorf("%s: mutant %s: dir %q is not inside the repository", path, m.ID, m.Dir)
		}
		if m.Find == m.Replace {
			return nil, fmt.Errorf("%s: mutant %s changes nothing", path, m.ID)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("%s: duplicate mutant %s", path, m.ID)
		}
		seen[m.ID] = true
	}
	return muts, nil
}

// apply runs the mutant's tests with the mutated file as an overlay.
func apply(m Mutant, tmp string) result {
	start := time.Now()
	r := result{m: m}
	src, err := os.ReadFile(m.File)
	if err != nil {
		r.outcome, r.detail = "broken", err.Error()
		return r
	}
	if n := bytes.Count(src, []byte(m.Find)); n != 1 {
		r.outcome, r.detail = "broken", fmt.Sprintf("the find text occurs %d times in %s, want once", n, m.File)
		return r
	}
	mutatedSrc := bytes.Replace(src, []byte(m.Find), []byte(m.Replace), 1)
	args := []string{"test", "-count=1"}
	dir := m.Dir
	if filepath.Ext(m.File) == ".go" {
		overlayFile, err := writeOverlay(m, mutatedSrc, tmp)
		if err != nil {
			r.outcome, r.detail = "broken", err.Error()
			return r
		}
		args = append(args, "-overlay", overlayFile)
	} else {
		// go test's overlay covers Go sources only, not the files a test
		// reads (a chart's templates): the mutant's Dir is copied and
		// mutated, and the tests run in the copy.
		dir, err = copyMutated(m, mutatedSrc, tmp)
		if err != nil {
			r.outcome, r.detail = "broken", err.Error()
			return r
		}
	}
	if m.Tags != "" {
		args = append(args, "-tags", m.Tags)
	}
	if m.Run != "" {
		args = append(args, "-run", m.Run)
	}
	args = append(args, m.Package)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	r.took = time.Since(start)
	var exit *exec.ExitError
	switch {
	case err == nil:
		r.outcome = "survived"
	case errors.As(err, &exit) && bytes.Contains(out, []byte("--- FAIL")):
		r.outcome = "killed"
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		r.outcome, r.detail = "broken", "the mutant does not compile: "+firstLine(out)
	default:
		r.outcome, r.detail = "killed", firstLine(out)
	}
	switch {
	case m.Equivalent == "":
	case r.outcome == "survived":
		r.outcome = "equivalent"
	case r.outcome == "killed":
		r.outcome, r.detail = "broken", "marked equivalent but killed: remove its equivalent note"
	}
	return r
}

// writeOverlay writes the mutated Go file and an overlay naming it.
func writeOverlay(m Mutant, mutated []byte, tmp string) (string, error) {
	abs, err := filepath.Abs(m.File)
	if err != nil {
		return "", err
	}
	file := filepath.Join(tmp, m.ID+filepath.Ext(m.File))
	if err := os.WriteFile(file, mutated, 0o600); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	overlayFile := filepath.Join(tmp, m.ID+".overlay.json")
	return overlayFile, os.WriteFile(overlayFile, overlay, 0o600)
}

// copyMutated builds a tree in tmp where every top-level entry of the
// repository is a symbolic link except the first component of m.Dir,
// which is a copy holding the mutated file (so a test that reads
// ../../docs/operations.md still finds it). It returns the directory to
// test in.
func copyMutated(m Mutant, mutated []byte, tmp string) (string, error) {
	if m.Dir == "" {
		return "", fmt.Errorf("a mutant of %s (not a Go file) needs a dir to copy", m.File)
	}
	top, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(m.Dir)), "/")
	if rel, err := filepath.Rel(top, m.File); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", m.File, top)
	}
	root := filepath.Join(tmp, m.ID+".tree")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name() == top {
			continue
		}
		abs, err := filepath.Abs(e.Name())
		if err != nil {
			return "", err
		}
		if err := os.Symlink(abs, filepath.Join(root, e.Name())); err != nil {
			return "", err
		}
	}
	if err := os.CopyFS(filepath.Join(root, top), os.DirFS(top)); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, m.File), mutated, 0o600); err != nil {
		return "", err
	}
	return filepath.Join(root, m.Dir), nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// report prints killed/total per row and fails when anything survived
// or could not be applied.
func report(results []result) error {
	type tally struct{ killed, survived, equivalent, broken int }
	rows := map[string]*tally{}
	for _, r := range results {
		t := rows[r.m.Row]
		if t == nil {
			t = &tally{}
			rows[r.m.Row] = t
		}
		switch r.outcome {
		case "killed":
			t.killed++
		case "survived":
			t.survived++
		case "equivalent":
			t.equivalent++
		default:
			t.broken++
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Println()
	fmt.Println("row        killed  survived  equivalent  broken")
	bad, equivalent := 0, 0
	for _, n := range names {
		t := rows[n]
		fmt.Printf("%-10s %6d  %8d  %10d  %6d\n", n, t.killed, t.survived, t.equivalent, t.broken)
		bad += t.survived + t.broken
		equivalent += t.equivalent
	}
	if bad > 0 {
		var ids []string
		for _, r := range results {
			if r.outcome == "survived" || r.outcome == "broken" {
				ids = append(ids, r.m.ID)
			}
		}
		return fmt.Errorf("%d of %d mutants survived or could not be applied: %s", bad, len(results), strings.Join(ids, ", "))
	}
	fmt.Printf("all %d mutants killed or shown equivalent (%d equivalent)\n", len(results), equivalent)
	return nil
}
