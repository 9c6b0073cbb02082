package tool_test

import (
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

func TestAssess(t *testing.T) {
	tests := []struct {
		name      string
		d         tool.Definition
		supported bool
		reason    string // prefix
		write     bool
	}{
		{"supported read-only", mustDefinition(t, "search", "", searchSchema, `{"readOnlyHint":true}`), true, "", false},
		{"supported write", mustDefinition(t, "create", "", searchSchema, ``), true, "", true},
		{"unsupported schema", mustDefinition(t, "search", "", `{"type":"object","properties":{"a":{"type":"object"}}}`, ``), false, "unsupported schema: nested object in property a", true},
		{"bad name", mustDefinition(t, "sea rch", "", searchSchema, ``), false, "unsupported name", true},
		{"long name beats schema", mustDefinition(t, strings.Repeat("n", 70), "", `[]`, ``), false, "name too long", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tool.Assess("wiki", tt.d)
			if a.Supported != tt.supported || !strings.HasPrefix(a.Reason, tt.reason) || (tt.reason == "") != (a.Reason == "") ||
				a.WriteCapable != tt.write || a.Hash != tool.Hash(tt.d) || a.Definition.Name() != tt.d.Name() {
				t.Errorf("Assess(%q) = %+v, want supported %v reason %q write %v", tt.d.Name(), a, tt.supported, tt.reason, tt.write)
			}
		})
	}
}
