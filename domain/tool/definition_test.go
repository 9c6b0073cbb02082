package tool_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/tool"
)

const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`

func mustDefinition(t *testing.T, name, desc, schema, ann string) tool.Definition {
	t.Helper()
	var a json.RawMessage
	if ann != "" {
		a = json.RawMessage(ann)
	}
	d, err := tool.NewDefinition(name, desc, json.RawMessage(schema), a)
	if err != nil {
		t.Fatalf("NewDefinition(%q) = %v", name, err)
	}
	return d
}

func TestNewDefinition(t *testing.T) {
	d := mustDefinition(t, "search", "Search the wiki", ` { "type" : "object" } `, `{"readOnlyHint":true, "title":"x"}`)
	if d.Name() != "search" || d.Description() != "Search the wiki" {
		t.Errorf("NewDefinition() = %q %q, want search, Search the wiki", d.Name(), d.Description())
	}
	if got := string(d.InputSchema()); got != `{"type":"object"}` {
		t.Errorf("InputSchema() = %q, want canonical", got)
	}
	if got := string(d.Annotations()); got != `{"readOnlyHint":true,"title":"x"}` {
		t.Errorf("Annotations() = %q, want canonical", got)
	}
	if ro := d.ReadOnlyHint(); ro == nil || !*ro {
		t.Errorf("ReadOnlyHint() = %v, want true", ro)
	}
	if d.DestructiveHint() != nil {
		t.Errorf("DestructiveHint() = %v, want nil", d.DestructiveHint())
	}
	// Getters return copies.
	d.InputSchema()[0] = 'X'
	*d.ReadOnlyHint() = false
	if string(d.InputSchema()) != `{"type":"object"}` || !*d.ReadOnlyHint() {
		t.Errorf("getters leak internal state")
	}
}

func TestNewDefinitionAbsentAnnotations(t *testing.T) {
	tests := []struct {
		name string
		ann  json.RawMessage
	}{
		{"nil", nil},
		{"empty", json.RawMessage("")},
		{"blank", json.RawMessage("  ")},
		{"null", json.RawMessage("null")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tool.NewDefinition("t", "", json.RawMessage(`{}`), tt.ann)
			if err != nil || d.Annotations() != nil {
				t.Errorf("NewDefinition(ann %q) = %q, %v, want nil annotations", tt.ann, d.Annotations(), err)
			}
		})
	}
}

func TestNewDefinitionRefuses(t *testing.T) {
	tests := []struct {
		name, tool, schema, ann string
		wantField               string // field.Error.Field, or "" for UnsupportedError
	}{
		{"empty name", "", `{}`, "", "name"},
		{"invalid utf8 name", "a\xff", `{}`, "", "name"},
		{"schema not JSON", "t", `{`, "", ""},
		{"schema empty", "t", ``, "", ""},
		{"schema duplicate", "t", `{"type":"object","type":"array"}`, "", ""},
		{"annotations not JSON", "t", `{}`, `{x}`, "annotations"},
		{"annotations duplicate", "t", `{}`, `{"readOnlyHint":true,"readOnlyHint":false}`, "annotations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ann json.RawMessage
			if tt.ann != "" {
				ann = json.RawMessage(tt.ann)
			}
			_, err := tool.NewDefinition(tt.tool, "", json.RawMessage(tt.schema), ann)
			var fe *field.Error
			var ue *tool.UnsupportedError
			switch {
			case tt.wantField != "" && (!errors.As(err, &fe) || fe.Field != tt.wantField):
				t.Errorf("NewDefinition(%q, %q, %q) = %v, want field.Error on %s", tt.tool, tt.schema, tt.ann, err, tt.wantField)
			case tt.wantField == "" && !errors.As(err, &ue):
				t.Errorf("NewDefinition(%q, %q, %q) = %v, want UnsupportedError", tt.tool, tt.schema, tt.ann, err)
			}
			if err != nil && err.Error() == "" {
				t.Errorf("error text empty")
			}
		})
	}
}

func TestWriteCapable(t *testing.T) {
	tests := []struct {
		ann  string
		want bool
	}{
		{"", true},
		{`null`, true},
		{`{}`, true},
		{`{"readOnlyHint":true}`, false},
		{`{"readOnlyHint":true,"destructiveHint":false}`, false},
		{`{"readOnlyHint":true,"destructiveHint":true}`, true},
		{`{"readOnlyHint":false}`, true},
		{`{"destructiveHint":false}`, true},
		{`{"readOnlyHint":"true"}`, true},
		{`{"readOnlyHint":1}`, true},
		{`{"readOnlyHint":true,"destructiveHint":"no"}`, true},
		{`{"readOnlyHint":true,"destructiveHint":null}`, true},
		{`[{"readOnlyHint":true}]`, true},
		{`"readOnlyHint"`, true},
		{`true`, true},
		{`{"ReadOnlyHint":true}`, true},
		{`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":true}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.ann, func(t *testing.T) {
			d := mustDefinition(t, "t", "", `{}`, tt.ann)
			if got := tool.WriteCapable(d); got != tt.want {
				t.Errorf("WriteCapable(%q) = %v, want %v", tt.ann, got, tt.want)
			}
		})
	}
}
