// Command gojsonschema writes jsonschema-go.json of the schema corpus
// (package schemacorpus) into a directory, by default
// domain/tool/testdata/schemas of the repository it runs in:
//
//	go run ./tools/schemacorpus/gojsonschema [OUTDIR]
//
// `make schema-corpus` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/codelotse/codelotse/tools/schemacorpus"
)

func main() {
	dir := filepath.Join("domain", "tool", "testdata", "schemas")
	switch len(os.Args) {
	case 1:
	case 2:
		dir = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: gojsonschema [OUTDIR]")
		os.Exit(2)
	}
	b, err := schemacorpus.JSONSchemaGo()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "jsonschema-go.json"), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gojsonschema:", err)
		os.Exit(1)
	}
}
