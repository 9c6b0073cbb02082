// Package schemacorpus writes the schema corpus of domain/tool's tests:
// domain/tool/testdata/schemas/, one file per schema generator that MCP
// server authors use, each a table of flat tool signatures with the input
// schema the generator emits for them, whether the schema rule accepts it,
// and arguments that validation must accept or refuse (README.md).
//
// zod3.json and zod4.json come from gen.mjs (the npm packages pinned in
// package-lock.json), jsonschema-go.json from [JSONSchemaGo] (run by
// ./gojsonschema), and pydantic2.json is written by hand. `make
// schema-corpus` regenerates the generated ones; corpus_test.go fails
// when the committed files are stale.
package schemacorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// File is one generator's corpus file.
type File struct {
	// Generator names the generator, its version and the options used.
	Generator string `json:"generator"`
	// Generated is false for hand-written fixtures.
	Generated bool   `json:"generated"`
	Cases     []Case `json:"cases"`
}

// Case is one flat tool signature and what the schema rule must do with
// its schema.
type Case struct {
	// Idiom names the signature's idiom, unique in the file.
	Idiom string `json:"idiom"`
	// Source is the code whose schema this is.
	Source string `json:"source"`
	// Schema is the tool's input schema exactly as the generator emits it.
	Schema json.RawMessage `json:"schema"`
	// Supported is the expected verdict of the schema rule.
	Supported bool `json:"supported"`
	// Reason is, for a refused schema, a substring of the expected reason;
	// empty for a supported one.
	Reason string `json:"reason"`
	// Valid are argument objects validation must accept; Invalid ones it
	// must refuse, each breaking exactly one rule. Both are empty for a
	// refused schema.
	Valid   []json.RawMessage `json:"valid"`
	Invalid []json.RawMessage `json:"invalid"`
}

// Encode returns f as the corpus files hold it: two-space indentation,
// no HTML escaping, the keys in the order of the struct fields (the
// schema's own keys as emitted), a final newline. JSON.stringify(f, null,
// 2) in gen.mjs writes the same bytes.
func Encode(f File) ([]byte, error) {
	for i := range f.Cases {
		c := &f.Cases[i]
		if c.Valid == nil {
			c.Valid = []json.RawMessage{}
		}
		if c.Invalid == nil {
			c.Invalid = []json.RawMessage{}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("schemacorpus: encode %s: %w", f.Generator, err)
	}
	return buf.Bytes(), nil
}
