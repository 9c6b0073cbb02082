// Package tooltest builds checked tool-call arguments for the tests of
// the packages that send them.
package tooltest

import (
	"encoding/json"
	"fmt"

	"github.com/codelotse/codelotse/domain/tool"
)

// Args checks raw, a flat JSON object ("" is {}), against [Schema] of
// raw, and panics when raw is no such object.
func Args(raw string) tool.Arguments {
	if raw == "" {
		raw = "{}"
	}
	a, err := Schema(raw).Check(json.RawMessage(raw))
	if err != nil {
		panic(fmt.Sprintf("tooltest: %q: %v", raw, err))
	}
	return a
}

// Schema is a schema that names each key of raw, a flat JSON object,
// with the type of its value (strings for anything but numbers and
// booleans); it panics when raw is no JSON object.
func Schema(raw string) tool.Schema {
	var values map[string]any
	if err := json.Unmarshal([]byte(raw), &values); err != nil {
		panic(fmt.Sprintf("tooltest: %q: %v", raw, err))
	}
	props := map[string]any{}
	for k, v := range values {
		typ := "string"
		switch v.(type) {
		case float64:
			typ = "number"
		case bool:
			typ = "boolean"
		}
		props[k] = map[string]string{"type": typ}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	s, err := tool.CheckSchema(schema)
	if err != nil {
		panic(fmt.Sprintf("tooltest: %q: %v", raw, err))
	}
	return s
}
