//go:build signedoff

package main

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestE2EDebugPromptLogs runs reviews through the binary with the
// tenant's debug prompt logs on, then off: while on, every model request
// is kept, readable through the API (the finder's MCP result as wrapped,
// the secret in the review redacted), encrypted at rest (the result's
// canary is in no pg_dump output), never in the logs, and gone from the
// API once expired; turning the setting off deletes them at once, and a
// review while it is off writes none.
func TestE2EDebugPromptLogs(t *testing.T) {
	t.Parallel()
	const (
		awsKey       = "AKIAQYLPMN5HHHFPZAM3"
		resultCanary = "albatross-saffron-promptcanary"
	)
	finder := []any{
		toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache"})),
		contentTurn(map[string]any{"findings": []any{scriptedFinding}}),
	}
	verdict := contentTurn(map[string]any{"verdicts": []any{map[string]any{"index": 0, "keep": true, "reason": "in the diff"}}})
	in, _ := scriptedInstance(t, map[string]any{
		"finder":   append(append([]any{}, finder...), finder...), // two reviews
		"verifier": []any{verdict, verdict},
		"summary":  []any{contentTurn("One finding."), contentTurn("One finding.")},
	})
	in.secret(awsKey, resultCanary)
	tenantID, c := in.tenant("prompts", "tenant:manage,repo:manage")
	repoOnly := in.token(tenantID, "repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "Wiki: "+resultCanary+" explains eviction.")
	})
	repoID := privateRepoWithMCP(t, c, allowlistSearch(t, c, "wiki", p, "e2e-prompts-bearer-Kk31"))

	if l := repoOnly.do("GET", "/v1/repositories", nil); !strings.Contains(string(l.Raw), `"mcpActive":true`) {
		t.Errorf("GET /v1/repositories = %s, want the repository with mcpActive", l.Raw)
	}

	s := c.do("PUT", "/v1/tenant/settings", map[string]any{"retentionDays": 30, "debugPrompts": map[string]any{"enabled": true, "ttlHours": 2}})
	expect(t, "enable debug prompts", s, 200, "")
	reviewID := reviewWithDescription(t, c, repoID, "Rotates the deploy key "+awsKey+".")

	// Readable through the API by tenant:manage only.
	expect(t, "prompts with repo:manage", repoOnly.do("GET", "/v1/reviews/"+reviewID+"/prompts", nil), 403, "forbidden")
	r := c.do("GET", "/v1/reviews/"+reviewID+"/prompts", nil)
	expect(t, "GET prompts", r, 200, "")
	prompts, _ := r.Body["prompts"].([]any)
	var steps []string
	all := string(r.Raw)
	for _, p := range prompts {
		m := p.(map[string]any)
		steps = append(steps, fmt.Sprintf("%s/%v", m["step"], m["turn"]))
	}
	if strings.Join(steps, " ") != "finder/1 finder/2 verifier/1 summary/1" {
		t.Fatalf("prompts %v, want one per model request: %s", steps, r.Raw)
	}
	if !strings.Contains(all, `\u003cuntrusted source=\"mcp:wiki/search\"`) && !strings.Contains(all, `<untrusted source=\"mcp:wiki/search\"`) {
		t.Errorf("the finder's MCP result is not in the prompt log as wrapped: %s", r.Raw)
	}
	if !strings.Contains(all, resultCanary) {
		t.Errorf("the MCP result is not readable in the prompt log")
	}
	if strings.Contains(all, awsKey) || !strings.Contains(all, "[REDACTED:") {
		t.Errorf("the secret in the review is not redacted in the prompt log: %s", r.Raw)
	}

	// Encrypted at rest: the result's canary (stored nowhere else) is in no
	// table, in pg_dump's output neither.
	if n := countRows(t, in, "SELECT count(*) FROM prompt_logs"); n != 4 {
		t.Errorf("%d prompt_logs rows, want 4", n)
	}
	// The review's own description is stored in plaintext (review_runs):
	// finding it shows the dump holds the rows the canary is looked for in.
	if dump := pgDump(t, in); strings.Contains(dump, resultCanary) || !strings.Contains(dump, "COPY public.prompt_logs") || !strings.Contains(dump, awsKey) {
		t.Errorf("pg_dump holds the canary, or lacks the prompt_logs rows or the review's description")
	}

	// Keys rotate re-seals them under the new primary key.
	_, key2 := newKey(t)
	in.secret(key2)
	out, stderr, err := in.tryCLIEnv([]string{"QUAVON_ENCRYPTION_KEYS=k2:" + key2 + "," + keyRingOf(in)}, "keys", "rotate")
	if err != nil || !strings.Contains(out, "prompt logs rotated: 4") {
		t.Errorf("keys rotate = %q, %q, %v; want 4 prompt logs rotated", out, stderr, err)
	}

	// Expired by the clock: two hours later (rows moved back in time, as
	// a clock two hours ahead sees them) the API answers none.
	if _, err := in.db().Exec(context.Background(), "UPDATE prompt_logs SET created_at = created_at - interval '2 hours', expires_at = expires_at - interval '2 hours'"); err != nil {
		t.Fatal(err)
	}
	if r := c.do("GET", "/v1/reviews/"+reviewID+"/prompts", nil); r.Status != 200 || len(r.Body["prompts"].([]any)) != 0 {
		t.Errorf("expired prompts = %d %s, want an empty list", r.Status, r.Raw)
	}

	// Off: the logs are deleted at once, and the next review writes none.
	s = c.do("PUT", "/v1/tenant/settings", map[string]any{"retentionDays": 30, "debugPrompts": map[string]any{"enabled": false, "ttlHours": 2}})
	expect(t, "disable debug prompts", s, 200, "")
	if n := countRows(t, in, "SELECT count(*) FROM prompt_logs"); n != 0 {
		t.Errorf("%d prompt_logs rows after turning the setting off, want 0", n)
	}
	second := reviewWithDescription(t, c, repoID, "A second look.")
	if n := countRows(t, in, "SELECT count(*) FROM prompt_logs"); n != 0 {
		t.Errorf("%d prompt_logs rows written while the setting is off", n)
	}
	if strings.Contains(dumpDatabase(t, in), resultCanary) {
		t.Error("a table holds the run's canary while debug prompts are off")
	}
	if r := c.do("GET", "/v1/reviews/"+second+"/prompts", nil); r.Status != 200 || len(r.Body["prompts"].([]any)) != 0 {
		t.Errorf("prompts of a review while off = %d %s", r.Status, r.Raw)
	}
	events := auditEvents(t, c, 10)
	var settingsChanges int
	for _, e := range events {
		if e["action"] == "tenant.settings" {
			settingsChanges++
		}
	}
	if settingsChanges != 2 {
		t.Errorf("%d tenant.settings audit events, want 2: %v", settingsChanges, events)
	}
}

// reviewWithDescription submits a review and waits until it finished.
func reviewWithDescription(t *testing.T, c *client, repoID, description string) string {
	t.Helper()
	r := c.do("POST", "/v1/repositories/"+repoID+"/reviews", map[string]any{
		"title": "Cache writes", "description": description, "diff": reviewDiff, "files": map[string]string{"cache.go": reviewFile}})
	expect(t, "POST …/reviews", r, 202, "")
	id := str(r.Body, "id")
	deadline := time.Now().Add(60 * time.Second)
	for {
		g := c.do("GET", "/v1/reviews/"+id, nil)
		if g.Status != http.StatusOK {
			t.Fatalf("GET /v1/reviews/%s = %d %s", id, g.Status, g.Raw)
		}
		if g.Body["status"] == "done" {
			return id
		}
		if g.Body["status"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("review %s: %s", id, g.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgDump returns pg_dump's plain output of the instance's database.
func pgDump(t *testing.T, in *instance) string {
	t.Helper()
	out, err := exec.Command("pg_dump", "--no-owner", "--dbname="+pgtest.SuperuserDSN(in.dsn)).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	return string(out)
}

// keyRingOf returns the instance's QUAVON_ENCRYPTION_KEYS.
func keyRingOf(in *instance) string {
	for _, kv := range in.env {
		if v, ok := strings.CutPrefix(kv, "QUAVON_ENCRYPTION_KEYS="); ok {
			return v
		}
	}
	return ""
}
