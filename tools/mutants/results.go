package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// resultsFile is where a full run records its outcomes; -doc renders
// docs/sign-off.md's tables from it.
const resultsFile = "tools/mutants/results.json"

// Run is the record of the last full run (make mutants): the commit it
// ran on, whether the tree had changes that commit lacks, when, and each
// mutant's outcome (killed, survived, equivalent, broken).
type Run struct {
	Commit   string            `json:"commit"`
	Dirty    bool              `json:"dirty"`
	Date     string            `json:"date"`
	Seconds  int               `json:"seconds,omitempty"` // how long the run took
	Outcomes map[string]string `json:"outcomes"`
}

// newRun starts the record of a run on the repository's HEAD as it is
// now, dated now, with no outcome yet.
func newRun(now time.Time) Run {
	r := Run{Date: now.UTC().Format(time.RFC3339), Outcomes: map[string]string{}}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		r.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		r.Dirty = len(bytes.TrimSpace(out)) > 0
	}
	return r
}

func writeRun(path string, r Run) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readRun(path string) (Run, error) {
	var r Run
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("the results of a full run: %w (run make mutants)", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// missing lists the catalogue's mutants the run has no outcome of.
func (r Run) missing(muts []Mutant) []string {
	var out []string
	for _, m := range muts {
		if _, ok := r.Outcomes[m.ID]; !ok {
			out = append(out, m.ID)
		}
	}
	return out
}

// heading is the line above the counts: which run they are.
func (r Run) heading() string {
	commit := r.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	tree := "a clean tree"
	if r.Dirty {
		tree = "a tree with uncommitted changes"
	}
	took := ""
	if r.Seconds > 0 {
		took = fmt.Sprintf(", in %s", (time.Duration(r.Seconds) * time.Second).String())
	}
	return fmt.Sprintf("From the last full run, `make mutants` on commit `%s` (%s), %s%s.", commit, tree, r.Date, took)
}
