//go:build signedoff

package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestE2ETokenLifecycle: tokens through the binary, on two API replicas
// sharing one database. The CLI creates one with a label and an expiry
// and lists it (never the secret); the API lists, creates and revokes; a
// revoked or expired token fails at once on the other replica and its web
// sessions there end; every change is audited without a secret; failed
// bearer authentications answer 429 rate_limited with Retry-After and are
// logged with the client address. Every answer is validated against
// openapi.yaml.
func TestE2ETokenLifecycle(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a := startCommandOn(t, "api", dsn)
	addrB := freeAddr(t)
	b := startCommandOn(t, "api", dsn, "QUAVON_HTTP_ADDR="+addrB, "QUAVON_PUBLIC_URL=http://"+addrB)
	tenantID, admin := a.tenant("tokens", "tenant:manage")

	// The CLI: a labelled token with an expiry, listed without its secret.
	ci := a.cli("tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--label", "ci bot", "--expires-in", "90d")
	a.secret(ci)
	list := a.cli("tokens", "list", "--tenant", tenantID)
	lines := strings.Split(list, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID\tLABEL\tPERMISSIONS\tCREATED\tLAST USED\tEXPIRES") ||
		!strings.Contains(list, "\"ci bot\"\trepo:manage\t") || strings.Contains(list, ci) || strings.Contains(list, admin.token) {
		t.Fatalf("tokens list:\n%s", list)
	}
	for _, bad := range [][]string{
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--expires-in", "forever"},
		// A lifetime of zero or less is refused, never a token that does not expire.
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--expires-in", "0d"},
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--expires-in", "0h"},
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--expires-in", "0m"},
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--expires-in", "-1d"},
		{"tokens", "create", "--tenant", tenantID, "--permissions", "repo:manage", "--label", "a\nb"},
		{"tokens", "list", "--tenant", "acme"},
		{"tokens", "revoke"},
		{"tokens", "revoke", "00000000-0000-4000-8000-000000000000"},
	} {
		if _, stderr, err := a.tryCLI(bad...); err == nil || strings.Count(stderr, "\n") > 20 || strings.Contains(stderr, "panic") {
			t.Errorf("codelotse %q: err %v, stderr %q", bad, err, stderr)
		}
	}

	// The API lists both, never a secret.
	got := admin.do("GET", "/v1/tokens", nil)
	expect(t, "GET /v1/tokens", got, 200, "")
	if toks, _ := got.Body["tokens"].([]any); len(toks) != 2 || strings.Contains(string(got.Raw), ci) || strings.Contains(string(got.Raw), admin.token) {
		t.Fatalf("tokens = %s", got.Raw)
	}
	ciID := tokenIDByLabel(t, got, "ci bot")

	// The ci token works on replica B, for the API and a web session.
	onB := &client{in: b, token: ci}
	expect(t, "the ci token on B", onB.do("GET", "/v1/repositories", nil), 200, "")
	web := newWebSession(t, b.base, ci)
	if status, _, _ := web.do("GET", "/ui/repositories", nil); status != http.StatusOK {
		t.Fatalf("web session on B = %d", status)
	}

	// Revoked on A: fails at once on B; its session on B ends.
	expect(t, "revoke on A", admin.do("DELETE", "/v1/tokens/"+ciID, nil), 204, "")
	expect(t, "the revoked token on B", onB.do("GET", "/v1/repositories", nil), 401, "unauthenticated")
	if status, loc, _ := web.do("GET", "/ui/repositories", nil); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login") {
		t.Errorf("the revoked token's session on B = %d %q", status, loc)
	}
	expect(t, "revoke again", admin.do("DELETE", "/v1/tokens/"+ciID, nil), 404, "not_found")

	// Created through the API (shown once), revoked by the operator's CLI.
	made := admin.do("POST", "/v1/tokens", map[string]any{"label": "deploy", "permissions": []string{"repo:manage"}, "expiresIn": "720h"})
	expect(t, "POST /v1/tokens", made, 201, "")
	deploy, _ := made.Body["token"].(string)
	a.secret(deploy)
	expect(t, "the API's token on B", (&client{in: b, token: deploy}).do("GET", "/v1/repositories", nil), 200, "")
	if out := a.cli("tokens", "revoke", str(made.Body, "id")); !strings.Contains(out, "revoked "+str(made.Body, "id")) {
		t.Errorf("tokens revoke printed %q", out)
	}
	expect(t, "the CLI-revoked token on B", (&client{in: b, token: deploy}).do("GET", "/v1/repositories", nil), 401, "unauthenticated")
	expect(t, "bad expiry", admin.do("POST", "/v1/tokens", map[string]any{"permissions": []string{"repo:manage"}, "expiresIn": "0s"}), 422, "validation_failed")

	// Expired: fails at once on B, its session there ends.
	exp := admin.do("POST", "/v1/tokens", map[string]any{"label": "short", "permissions": []string{"repo:manage"}, "expiresIn": "1h"})
	expect(t, "POST short-lived", exp, 201, "")
	short, _ := exp.Body["token"].(string)
	a.secret(short)
	shortWeb := newWebSession(t, b.base, short)
	if tag, err := a.db().Exec(context.Background(), `UPDATE api_tokens SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' WHERE id = $1`, str(exp.Body, "id")); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("expire the token: %v, %d rows", err, tag.RowsAffected())
	}
	expect(t, "the expired token on B", (&client{in: b, token: short}).do("GET", "/v1/repositories", nil), 401, "unauthenticated")
	if status, loc, _ := shortWeb.do("GET", "/ui/repositories", nil); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login") {
		t.Errorf("the expired token's session on B = %d %q", status, loc)
	}

	// Every change audited, without a secret.
	audit := admin.do("GET", "/v1/audit?limit=50", nil)
	expect(t, "audit", audit, 200, "")
	for _, want := range []string{`"token.create"`, `"token.revoke"`, `"actor":"operator"`, `"label":"ci bot"`} {
		if !strings.Contains(string(audit.Raw), want) {
			t.Errorf("audit lacks %s: %s", want, audit.Raw)
		}
	}
	for _, s := range []string{ci, deploy, short} {
		if strings.Contains(string(audit.Raw), s) {
			t.Errorf("the audit holds a token")
		}
	}

	// Failed bearer authentications from this client: 429 with
	// Retry-After past the limit (on B only, which counts this address's
	// failures for a minute), logged with the client address; a correct
	// token is never refused because of them.
	// (B saw three failures above: the revoked and the expired tokens.)
	for i := range 17 {
		bad := &client{in: b, token: fmt.Sprintf("clt_%02d", i) + strings.Repeat("x", 41)}
		if r := bad.do("GET", "/v1/mcp/status", nil); r.Status != 401 {
			t.Fatalf("failure %d = %d", i+4, r.Status)
		}
	}
	limited := (&client{in: b, token: "clt_zz" + strings.Repeat("x", 41)}).do("GET", "/v1/mcp/status", nil)
	expect(t, "past the limit", limited, 429, "rate_limited")
	if limited.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	expect(t, "the correct token on B meanwhile", (&client{in: b, token: admin.token}).do("GET", "/v1/mcp/status", nil), 200, "")
	expect(t, "the same token on A meanwhile", admin.do("GET", "/v1/mcp/status", nil), 200, "")
	if logs := b.logs.String(); !regexp.MustCompile(`"client":"127\.0\.0\.1"[^\n]*"message":"authentication failed"`).MatchString(logs) {
		t.Errorf("no failed authentication logged with the client address")
	}
	a.checkLogsHoldNoSecrets(t)
	b.secret(ci, deploy, short, admin.token)
	b.checkLogsHoldNoSecrets(t)
}

func tokenIDByLabel(t *testing.T, r response, label string) string {
	t.Helper()
	toks, _ := r.Body["tokens"].([]any)
	for _, x := range toks {
		if m, _ := x.(map[string]any); m["label"] == label {
			id, _ := m["id"].(string)
			return id
		}
	}
	t.Fatalf("no token labelled %q in %s", label, r.Raw)
	return ""
}
