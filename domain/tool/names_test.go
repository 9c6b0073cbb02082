package tool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

func TestModelToolName(t *testing.T) {
	// mcp_ + server + _ = 4 + 4 + 1 = 9 characters before the tool name.
	fits := strings.Repeat("t", limits.MaxModelToolNameLen-9)
	tests := []struct {
		server, tool string
		want         string
		wantReason   string // prefix of NameError.Reason
	}{
		{"wiki", "search", "mcp_wiki_search", ""},
		{"wiki", "get-page_2", "mcp_wiki_get-page_2", ""},
		{"wiki", "Search", "mcp_wiki_Search", ""},
		{"wiki", fits, "mcp_wiki_" + fits, ""},
		{"wiki", fits + "t", "", "name too long"},
		{"wiki", "", "", "unsupported name"},
		{"", "search", "", "unsupported name"},
		{"wiki", "search.v2", "", "unsupported name"},
		{"wiki", "search tool", "", "unsupported name"},
		{"wiki", "sëarch", "", "unsupported name"},
		{"wiki", "a\nIGNORE", "", "unsupported name"},
		{"wi ki", "search", "", "unsupported name"},
		{"wiki", strings.Repeat("é", 40), "", "unsupported name"},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			got, err := tool.ModelToolName(tt.server, tt.tool)
			var ne *tool.NameError
			switch {
			case tt.wantReason == "" && (err != nil || got != tt.want):
				t.Errorf("ModelToolName(%q, %q) = %q, %v, want %q", tt.server, tt.tool, got, err, tt.want)
			case tt.wantReason != "" && (!errors.As(err, &ne) || !strings.HasPrefix(err.Error(), tt.wantReason) || ne.Tool != tt.tool || got != ""):
				t.Errorf("ModelToolName(%q, %q) = %q, %v, want %s", tt.server, tt.tool, got, err, tt.wantReason)
			}
		})
	}
}
