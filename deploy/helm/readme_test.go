package helm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// operationsDoc is the page whose helm commands the operators follow.
const operationsDoc = "../../docs/operations.md"

// helmCommand is one `helm install` or `helm upgrade` of docs/operations.md.
type helmCommand struct {
	line        string
	verb, chart string
	files, sets []string
	reuse       bool
}

// docCommands finds the helm commands in the code blocks of
// docs/operations.md (indented four spaces, continued with a trailing
// backslash).
func docCommands(t *testing.T) []helmCommand {
	t.Helper()
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []helmCommand
	lines := strings.Split(string(raw), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimPrefix(lines[i], "    ")
		if !strings.HasPrefix(lines[i], "    helm ") {
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		f := strings.Fields(l)
		if len(f) < 4 {
			t.Fatalf("%s: short helm command %q", operationsDoc, l)
		}
		c := helmCommand{line: l, verb: f[1], chart: f[3]}
		for j := 4; j < len(f); j++ {
			switch f[j] {
			case "--namespace", "-n":
				j++
			case "-f", "--values":
				j++
				c.files = append(c.files, f[j])
			case "--set":
				j++
				c.sets = append(c.sets, f[j])
			case "--reuse-values":
				c.reuse = true
			default:
				t.Fatalf("%s: %q: flag %q unknown to this test", operationsDoc, l, f[j])
			}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// TestDocCommandsRender renders each helm command of docs/operations.md exactly
// as written (an upgrade with --reuse-values on top of the first install)
// and checks its profile's promises: the doc cannot drift from the chart.
func TestDocCommandsRender(t *testing.T) {
	cmds := docCommands(t)
	verbs := map[string]int{}
	var first *helmCommand
	for i, c := range cmds {
		verbs[c.verb]++
		if c.chart != "deploy/helm/codelotse" {
			t.Errorf("%q: chart %q, want deploy/helm/codelotse", c.line, c.chart)
			continue
		}
		var files []string
		airgap := false
		for _, f := range c.files {
			rel, ok := strings.CutPrefix(f, "deploy/helm/")
			if !ok {
				t.Fatalf("%q: values file %q outside the chart", c.line, f)
			}
			files = append(files, filepath.FromSlash(rel))
			airgap = airgap || rel == "codelotse/values-airgap.yaml"
		}
		sets := c.sets
		if c.reuse {
			if first == nil {
				t.Fatalf("%q reuses values before any install", c.line)
			}
			files, sets = append(slices.Clone(first.files), files...), append(slices.Clone(first.sets), sets...)
		}
		if c.verb == "install" && first == nil {
			first = &cmds[i]
		}
		objs, err := renderExactly(files, sets)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		checks := standardChecks
		if airgap {
			checks = append(slices.Clone(standardChecks), airgapChecks...)
		}
		for _, ch := range checks {
			if problems := ch.check(objs, airgapProfile); len(problems) > 0 {
				t.Errorf("%q: %s: %v", c.line, ch.name, problems)
			}
		}
	}
	if verbs["install"] < 2 || verbs["upgrade"] < 1 {
		t.Errorf("%s: helm commands %v, want both profiles' installs and the scaling upgrade", operationsDoc, verbs)
	}
}
