package httpapi

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

// TestToolJSONKeys: the embedded toolJSON keeps both answers' keys flat
// and exactly openapi.yaml's required lists (additionalProperties: false).
func TestToolJSONKeys(t *testing.T) {
	def, err := tool.NewDefinition("search", "finds", json.RawMessage(`{"type":"object"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tool.NewSnapshot("wiki", def, "admin text", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := server.ParseName("wiki")
	u, _ := server.ParseURL("https://wiki.example.com/mcp")
	s, err := server.NewServer("00000001-3333-4333-8333-333333333333", "00000002-3333-4333-8333-333333333333", name, u, server.NoCredential(), true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceTools([]tool.Snapshot{snap}, time.Now()); err != nil {
		t.Fatal(err)
	}
	reason := "unsupported schema"
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"ToolSnapshot", newToolSnapshotView(s, snap, testFindings),
			[]string{"name", "description", "inputSchema", "annotations", "writeCapable", "hash", "approvedAt", "state", "serverDefinition"}},
		{"ServerDefinition", newToolSnapshotView(s, snap, testFindings).ServerDefinition,
			[]string{"description", "inputSchema", "annotations", "findings"}},
		{"DiscoveredTool", discoveredToolJSON{toolJSON: toolJSON{Name: "x"}, Reason: &reason},
			[]string{"name", "description", "inputSchema", "annotations", "supported", "reason", "writeCapable", "hash", "findings"}},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s keys = %v, want %v (%s)", tt.name, got, want, b)
		}
	}
}
