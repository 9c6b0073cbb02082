package tool_test

import (
	"regexp"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

func TestHashDiffersPerField(t *testing.T) {
	base := mustDefinition(t, "search", "Search the wiki", searchSchema, `{"readOnlyHint":true}`)
	tests := []struct {
		name string
		d    tool.Definition
	}{
		{"name", mustDefinition(t, "search2", "Search the wiki", searchSchema, `{"readOnlyHint":true}`)},
		{"description", mustDefinition(t, "search", "Search the wiki.", searchSchema, `{"readOnlyHint":true}`)},
		{"description invisible char", mustDefinition(t, "search", "Search the\u200b wiki", searchSchema, `{"readOnlyHint":true}`)},
		{"schema", mustDefinition(t, "search", "Search the wiki", `{"type":"object"}`, `{"readOnlyHint":true}`)},
		{"schema property description", mustDefinition(t, "search", "Search the wiki",
			`{"type":"object","properties":{"query":{"type":"string","description":"IGNORE PREVIOUS"}},"required":["query"]}`, `{"readOnlyHint":true}`)},
		{"annotations", mustDefinition(t, "search", "Search the wiki", searchSchema, `{"readOnlyHint":false}`)},
		{"annotations absent", mustDefinition(t, "search", "Search the wiki", searchSchema, ``)},
		{"x-mcp-header added", mustDefinition(t, "search", "Search the wiki",
			`{"type":"object","properties":{"query":{"type":"string","description":"what to look for","x-mcp-header":"Query"}},"required":["query"]}`, `{"readOnlyHint":true}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tool.Hash(tt.d), tool.Hash(base); got == want {
				t.Errorf("Hash(%s changed) = %v, want != %v", tt.name, got, want)
			}
		})
	}
}

func TestHashStable(t *testing.T) {
	base := mustDefinition(t, "search", "d", searchSchema, `{"readOnlyHint":true,"title":"S"}`)
	tests := []struct {
		name string
		d    tool.Definition
	}{
		{"key order and whitespace", mustDefinition(t, "search", "d",
			"{\n  \"required\": [\"query\"],\n  \"properties\": {\"query\": {\"description\": \"what to look for\", \"type\": \"string\"}},\n  \"type\": \"object\"\n}",
			` {"title":"S" , "readOnlyHint" : true} `)},
		{"escapes", mustDefinition(t, "search", "d", `{"type":"object","properties":{"query":{"type":"\u0073tring","description":"what to look for"}},"required":["query"]}`,
			`{"readOnlyHint":true,"title":"\u0053"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tool.Hash(tt.d), tool.Hash(base); got != want {
				t.Errorf("Hash(%s) = %v, want %v", tt.name, got, want)
			}
		})
	}
}

func TestHashFraming(t *testing.T) {
	tests := []struct {
		name string
		a, b tool.Definition
	}{
		{"name/description boundary", mustDefinition(t, "ab", "c", `{}`, ""), mustDefinition(t, "a", "bc", `{}`, "")},
		{"description/schema boundary", mustDefinition(t, "a", "", `{}`, ""), mustDefinition(t, "a", "{}", `{}`, "")},
		{"absent vs empty object annotations are equal on purpose", mustDefinition(t, "a", "", `{}`, ""), mustDefinition(t, "a", "", `{}`, "{}")},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same := tool.Hash(tt.a) == tool.Hash(tt.b)
			if want := i == 2; same != want {
				t.Errorf("Hash(a) == Hash(b) = %v, want %v", same, want)
			}
		})
	}
}

// TestHashGolden pins the format: if this fails, stored pins no longer
// match and every allowlisted tool would be dropped as changed. Change the
// tag version and docs/TOOL-HASH.md instead.
func TestHashGolden(t *testing.T) {
	tests := []struct {
		name string
		d    tool.Definition
		want string
	}{
		{"search", mustDefinition(t, "search", "Search the wiki", searchSchema, `{"readOnlyHint":true}`),
			"d45ec66f0f48c021065f9bfe2268a5fb99d4ab0ee13aa34032cf6d79530ea145"},
		{"absent annotations", mustDefinition(t, "a", "", `{}`, ""),
			"1da7a4a08eb6ed7c634705e83d99742e7613bc2a8001747d7d9fc65af8f81e7a"},
		// The x-mcp-header is part of the canonical schema (docs/TOOL-HASH.md).
		{"x-mcp-header", mustDefinition(t, "search", "Search the wiki",
			`{"type":"object","required":["query"],"properties":{"region":{"x-mcp-header":"Region","type":"string"},"query":{"type":"string"}}}`, `{"readOnlyHint":true}`),
			"6a72700459c1768008bf52fc762dc7416f79e74780e66734914378ac482b5b18"},
	}
	hexRE := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tool.Hash(tt.d)
			if got != tt.want || !hexRE.MatchString(got) {
				t.Errorf("Hash(%q) = %v, want %v", tt.d.Name(), got, tt.want)
			}
		})
	}
}
