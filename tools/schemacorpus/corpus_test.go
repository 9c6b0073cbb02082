package schemacorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/internal/npmtest"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ecmaRegexp reads a schema's pattern with a backtracking engine in its
// ECMAScript mode (lookaheads included), independent of the service's
// translation to Go's regexp, so the tables are checked against
// ECMA-262's meaning of each pattern.
func ecmaRegexp(src string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(src, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = time.Second
	return ecmaRE{re}, nil
}

type ecmaRE struct{ re *regexp2.Regexp }

func (e ecmaRE) MatchString(s string) bool {
	ok, err := e.re.MatchString(s)
	return ok && err == nil
}

func (e ecmaRE) String() string { return e.re.String() }

// schemasDir is where the corpus lives, relative to this package.
const schemasDir = "../../domain/tool/testdata/schemas"

// The corpus files: the generated ones (gen.mjs writes the first two,
// JSONSchemaGo the third) and the hand-written one.
var (
	generatedFiles = []string{"zod3.json", "zod4.json", "jsonschema-go.json"}
	handWritten    = "pydantic2.json"
)

// minNode is the Node.js major version gen.mjs needs (package.json engines).
const minNode = 20

// TestCorpusUpToDate regenerates the generated corpus files into a
// temporary directory with the pinned generators and fails when a
// committed file differs, so that the corpus cannot go stale. It needs
// Node.js and npm (npm ci on first use); without them it fails, never
// skips.
func TestCorpusUpToDate(t *testing.T) {
	node := npmtest.RequireNode(t, minNode, "the schema corpus (tools/schemacorpus/gen.mjs)")
	npmtest.Install(t, ".", "tools/schemacorpus", func() string { return staleNodeModules(t) })
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "gen.mjs", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node gen.mjs: %v\n%s", err, out)
	}
	b, err := JSONSchemaGo()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jsonschema-go.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, name := range generatedFiles {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(schemasDir, name))
		if err != nil {
			t.Errorf("%v: run make schema-corpus and commit domain/tool/testdata/schemas/%s", err, name)
			continue
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("domain/tool/testdata/schemas/%s is stale: run make schema-corpus and commit it; %s", name, firstDifference(committed, fresh))
		}
	}
}

// firstDifference describes the first line where committed and fresh differ.
func firstDifference(committed, fresh []byte) string {
	a := strings.Split(string(committed), "\n")
	b := strings.Split(string(fresh), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("first difference at line %d:\n  committed: %q\n  generated: %q", i+1, x, y)
		}
	}
	return "they differ"
}

// TestCorpusWellFormed checks every corpus file, the hand-written one
// included, against the format the schema rule's test reads: only the
// known keys, written as Encode writes them, unique idioms, and for each
// case either a verdict with argument tables (supported) or a reason and
// none (refused).
func TestCorpusWellFormed(t *testing.T) {
	for _, name := range append(generatedFiles[:len(generatedFiles):len(generatedFiles)], handWritten) {
		t.Run(name, func(t *testing.T) {
			f, raw := readCorpus(t, name)
			if f.Generated != (name != handWritten) {
				t.Errorf("generated is %v", f.Generated)
			}
			if f.Generator == "" || len(f.Cases) == 0 {
				t.Fatal("no generator or no cases")
			}
			again, err := Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("not in the corpus format (two-space indentation, keys in order, final newline); %s", firstDifference(raw, again))
			}
			seen := map[string]bool{}
			for _, c := range f.Cases {
				if c.Idiom == "" || seen[c.Idiom] {
					t.Errorf("idiom %q empty or repeated", c.Idiom)
				}
				seen[c.Idiom] = true
				if c.Source == "" || !isObject(c.Schema) {
					t.Errorf("%s: no source, or the schema is not an object", c.Idiom)
				}
				switch {
				case c.Supported && (c.Reason != "" || len(c.Valid) == 0 || len(c.Invalid) == 0):
					t.Errorf("%s: a supported case has no reason and both argument tables", c.Idiom)
				case !c.Supported && (c.Reason == "" || len(c.Valid) != 0 || len(c.Invalid) != 0):
					t.Errorf("%s: a refused case has a reason and no arguments", c.Idiom)
				}
				for _, a := range append(c.Valid[:len(c.Valid):len(c.Valid)], c.Invalid...) {
					if !isObject(a) {
						t.Errorf("%s: arguments %s are not an object", c.Idiom, a)
					}
				}
			}
		})
	}
}

// TestCorpusArguments checks the argument tables of every supported case
// against a JSON Schema validator (santhosh-tekuri/jsonschema, formats
// asserted), so that a table does not contradict JSON Schema: each valid
// object is valid and each invalid one invalid under the case's schema,
// read with the one rule the service adds, that no argument the schema
// does not name is accepted (additionalProperties false, also where the
// schema says true or {}).
func TestCorpusArguments(t *testing.T) {
	for _, name := range append(generatedFiles[:len(generatedFiles):len(generatedFiles)], handWritten) {
		t.Run(name, func(t *testing.T) {
			f, _ := readCorpus(t, name)
			for _, c := range f.Cases {
				if !c.Supported {
					continue
				}
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Schema))
				if err != nil {
					t.Fatalf("%s: %v", c.Idiom, err)
				}
				// Whatever the schema says (zod's passthrough and loose
				// objects say true or {}), no unnamed argument is sent.
				doc.(map[string]any)["additionalProperties"] = false
				comp := jsonschema.NewCompiler()
				comp.DefaultDraft(jsonschema.Draft2020)
				comp.AssertFormat()
				comp.UseRegexpEngine(ecmaRegexp)
				url := "mem://corpus/" + name + "/" + c.Idiom + ".json"
				if err := comp.AddResource(url, doc); err != nil {
					t.Fatalf("%s: %v", c.Idiom, err)
				}
				sch, err := comp.Compile(url)
				if err != nil {
					t.Errorf("%s: compile: %v", c.Idiom, err)
					continue
				}
				for _, a := range c.Valid {
					if err := sch.Validate(instance(t, a)); err != nil {
						t.Errorf("%s: valid %s is refused: %v", c.Idiom, a, err)
					}
				}
				for _, a := range c.Invalid {
					if err := sch.Validate(instance(t, a)); err == nil {
						t.Errorf("%s: invalid %s is accepted", c.Idiom, a)
					}
				}
			}
		})
	}
}

// TestGoModulePins checks that the versions jsonschema-go.json names are
// the ones go.mod requires.
func TestGoModulePins(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"github.com/google/jsonschema-go":        JSONSchemaGoVersion,
		"github.com/modelcontextprotocol/go-sdk": GoSDKVersion,
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require ")); len(f) >= 2 {
			if _, ok := want[f[0]]; ok {
				got[f[0]] = f[1]
			}
		}
	}
	for path, v := range want {
		if got[path] != v {
			t.Errorf("go.mod requires %s %q, the corpus names %s: update the constants in jsonschemago.go and run make schema-corpus", path, got[path], v)
		}
	}
}

func readCorpus(t *testing.T, name string) (File, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(schemasDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f, raw
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

func instance(t *testing.T, b json.RawMessage) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// staleNodeModules names the first package whose installed version is not
// the one package-lock.json pins, or returns "".
func staleNodeModules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatalf("package-lock.json: %v", err)
	}
	for dir, p := range lock.Packages {
		if !strings.HasPrefix(dir, "node_modules/") {
			continue
		}
		var got struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &got)
		}
		if err != nil || got.Version != p.Version {
			return fmt.Sprintf("%s is %q, package-lock.json pins %q", dir, got.Version, p.Version)
		}
	}
	return ""
}
