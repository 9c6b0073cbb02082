package poison

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

// corpusCase is one tool definition of testdata/poisoned.json or
// testdata/benign.json.
type corpusCase struct {
	Source      string          `json:"source"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
	Expect      []string        `json:"expect"`
}

func loadCorpus(t testing.TB, file string) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func (c corpusCase) definition(t testing.TB) tool.Definition {
	t.Helper()
	schema := c.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	d, err := tool.NewDefinition(c.Name, c.Description, schema, c.Annotations)
	if err != nil {
		t.Fatalf("%s %s: %v", c.Source, c.Name, err)
	}
	return d
}

// poisonedTenant is the tenant of the poisoned corpus: the attacked
// server is "notes"; the others are the servers the attacks name.
var poisonedTenant = Context{
	ServerHost: "mcp.notes-tools.example",
	ServerName: "notes",
	OtherTools: []string{
		"send_email", "mcp_mail_send_email", "send_message", "mcp_whatsapp_send_message",
		"list_chats", "mcp_whatsapp_list_chats", "run_command", "mcp_shell_run_command",
		"transfer_funds", "mcp_bank_transfer_funds", "read_file", "mcp_filesystem_read_file",
		"delete_repository", "mcp_github_delete_repository", "export_all", "mcp_export_export_all",
		"get_fact_of_the_day", "mcp_facts_get_fact_of_the_day",
	},
}

func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// TestPoisonedCorpus: at least 95% of the published attacks are flagged,
// and at least 90% of the codes each case expects are among its findings.
func TestPoisonedCorpus(t *testing.T) {
	cases := loadCorpus(t, "poisoned.json")
	flagged, expected, found := 0, 0, 0
	for _, c := range cases {
		fs := Scan(c.definition(t), poisonedTenant)
		got := codes(fs)
		if len(fs) > 0 {
			flagged++
		} else {
			t.Logf("MISS %s (%s)", c.Source, c.Name)
		}
		for _, e := range c.Expect {
			expected++
			if slices.Contains(got, e) {
				found++
			} else {
				t.Logf("missing %s in %s (%s): got %v", e, c.Source, c.Name, got)
			}
		}
	}
	rate := float64(flagged) / float64(len(cases))
	codeRate := float64(found) / float64(expected)
	t.Logf("poisoned: %d of %d flagged (%.1f%%); expected codes found: %d of %d (%.1f%%)", flagged, len(cases), 100*rate, found, expected, 100*codeRate)
	if len(cases) < 80 {
		t.Errorf("the corpus has %d cases, want at least 80", len(cases))
	}
	if rate < 0.95 {
		t.Errorf("flagged rate %.3f, want at least 0.95", rate)
	}
	if codeRate < 0.90 {
		t.Errorf("expected-code rate %.3f, want at least 0.90", codeRate)
	}
}

// benignServer is the server a benign case comes from: its group in the
// corpus, its name in the tenant and its host.
func benignServer(source string) (group, name, host string) {
	switch {
	case strings.HasPrefix(source, "github/github-mcp-server"):
		return "github", "github", "api.githubcopilot.com"
	case strings.HasPrefix(source, "microsoft/playwright-mcp"):
		return "playwright", "playwright", "localhost"
	case strings.HasPrefix(source, "modelcontextprotocol/servers "):
		dir := strings.Split(strings.TrimPrefix(source, "modelcontextprotocol/servers src/"), "/")[0]
		return dir, dir, dir + ".mcp.internal.example"
	}
	first := strings.ToLower(strings.Fields(source)[0])
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, first)
	hosts := map[string]string{"sentry": "mcp.sentry.dev", "atlassian": "mcp.atlassian.com", "linear": "mcp.linear.app",
		"notion": "mcp.notion.com", "slack": "slack.com", "brave_search": "api.search.brave.com", "misc": "mcp.example-mcp.dev"}
	host = hosts[name]
	if host == "" {
		host = name + ".mcp.internal.example"
	}
	return name, name, host
}

// TestBenignCorpus: at most 2% of real servers' tools are flagged. The
// tenant has every server of the corpus, so each tool's context names
// the tools of all the others.
func TestBenignCorpus(t *testing.T) {
	cases := loadCorpus(t, "benign.json")
	byGroup := map[string][]string{}
	for _, c := range cases {
		g, _, _ := benignServer(c.Source)
		byGroup[g] = append(byGroup[g], c.Name)
	}
	flagged := 0
	for _, c := range cases {
		g, name, host := benignServer(c.Source)
		ctx := Context{ServerHost: host, ServerName: name, OwnTools: byGroup[g]}
		for og, names := range byGroup {
			if og == g {
				continue
			}
			for _, n := range names {
				ctx.OtherTools = append(ctx.OtherTools, n)
				if m, err := tool.ModelToolName(og, n); err == nil {
					ctx.OtherTools = append(ctx.OtherTools, m)
				}
			}
		}
		if fs := Scan(c.definition(t), ctx); len(fs) > 0 {
			flagged++
			t.Logf("FALSE ALARM %s (%s): %v", c.Source, c.Name, fs)
		}
	}
	rate := float64(flagged) / float64(len(cases))
	t.Logf("benign: %d of %d flagged (%.1f%%)", flagged, len(cases), 100*rate)
	if len(cases) < 300 {
		t.Errorf("the corpus has %d cases, want at least 300", len(cases))
	}
	if rate > 0.02 {
		t.Errorf("flagged rate %.3f, want at most 0.02", rate)
	}
}
