package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The schema corpus (testdata/schemas): the input schemas that the
// generators server authors use really emit for a table of flat tool
// signatures (zod 3 with zod-to-json-schema, zod 4, jsonschema-go; made by
// `make schema-corpus` with pinned versions) and hand-written fixtures of
// pydantic 2's output. Each case says whether the schema is supported
// and, if so, lists arguments that must be accepted and arguments that
// must be refused.

type corpusFile struct {
	Generator string       `json:"generator"`
	Generated bool         `json:"generated"`
	Cases     []corpusCase `json:"cases"`
}

type corpusCase struct {
	Idiom     string            `json:"idiom"`
	Source    string            `json:"source"`
	Schema    json.RawMessage   `json:"schema"`
	Supported bool              `json:"supported"`
	Reason    string            `json:"reason"`
	Valid     []json.RawMessage `json:"valid"`
	Invalid   []json.RawMessage `json:"invalid"`
}

// corpusGenerators are the files the corpus must hold.
var corpusGenerators = []string{"zod3.json", "zod4.json", "jsonschema-go.json", "pydantic2.json"}

func corpusFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, g := range corpusGenerators {
		out = append(out, filepath.Join("testdata", "schemas", g))
	}
	return out
}

func readCorpus(t *testing.T, path string) corpusFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the schema corpus is incomplete: %v", err)
	}
	var f corpusFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s holds no case", path)
	}
	return f
}

func TestSchemaCorpus(t *testing.T) {
	for _, path := range corpusFiles(t) {
		f := readCorpus(t, path)
		supported := 0
		for _, c := range f.Cases {
			t.Run(filepath.Base(path)+"/"+c.Idiom, func(t *testing.T) {
				d, err := NewDefinition("t", "", c.Schema, json.RawMessage(`{"readOnlyHint":true}`))
				if err != nil {
					t.Fatalf("NewDefinition: %v", err)
				}
				a := Assess("wiki", d)
				if a.Supported != c.Supported {
					t.Fatalf("%s: supported = %v (%s), want %v", c.Source, a.Supported, a.Reason, c.Supported)
				}
				if !c.Supported {
					if c.Reason == "" || !strings.Contains(a.Reason, c.Reason) {
						t.Errorf("%s: reason %q, want it to name %q", c.Source, a.Reason, c.Reason)
					}
					return
				}
				if len(c.Valid) == 0 || len(c.Invalid) == 0 {
					t.Fatalf("%s: a supported case needs valid and invalid arguments", c.Source)
				}
				s, _ := d.checkedSchema()
				for _, args := range c.Valid {
					if err := s.Validate(args); err != nil {
						t.Errorf("%s: Validate(%s) = %v, want valid", c.Source, args, err)
					}
				}
				for _, args := range c.Invalid {
					if err := s.Validate(args); err == nil {
						t.Errorf("%s: Validate(%s) accepted, want refused", c.Source, args)
					}
				}
				// What the model is offered is itself a schema this rule
				// accepts, and reads the same way.
				m, err := CheckSchema(s.ModelSchema())
				if err != nil {
					t.Fatalf("the model schema %s is not supported: %v", s.ModelSchema(), err)
				}
				for _, args := range append(append([]json.RawMessage{}, c.Valid...), c.Invalid...) {
					if (m.Validate(args) == nil) != (s.Validate(args) == nil) {
						t.Errorf("%s: the model schema and the schema disagree on %s", c.Source, args)
					}
				}
			})
			if c.Supported {
				supported++
			}
		}
		if supported == 0 {
			t.Errorf("%s: no supported case", path)
		}
	}
}
