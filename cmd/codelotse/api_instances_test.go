//go:build signedoff

package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/crypto"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// TestWhenTheInstanceDisablesMCPContext: with QUAVON_MCP_CONTEXT=disabled
// every MCP change answers 422 instance_disabled even in a signed-off
// build; deleting a server (registered by an instance that allows MCP
// context, on the same database) still works.
func TestWhenTheInstanceDisablesMCPContext(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	dsn := pgtest.DSN(t)
	allowed := startInstanceOn(t, dsn, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_ENCRYPTION_KEYS=k1:"+key)
	disabled := startInstanceOn(t, dsn, "QUAVON_MCP_CONTEXT=disabled", "QUAVON_ENCRYPTION_KEYS=k1:"+key)

	_, a := allowed.tenant("disabled", "tenant:manage,repo:manage")
	s := a.do("POST", "/v1/mcp/servers", serverBody("wiki"))
	expect(t, "create on the allowing instance", s, 201, "")
	sid := str(s.Body, "id")
	repo := a.do("POST", "/v1/repositories", map[string]any{"name": "acme/api", "visibility": "private"})
	rid := str(repo.Body, "id")
	expect(t, "policy on the allowing instance", a.do("PUT", "/v1/repositories/"+rid+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}}}), 200, "")
	if _, _, active := policyOf(t, a.do("GET", "/v1/repositories/"+rid+"/policy", nil)); active != true {
		t.Errorf("the allowing instance says mcpActive %v", active)
	}

	d := &client{in: disabled, token: a.token}

	st := d.do("GET", "/v1/mcp/status", nil)
	if st.Body["signedOff"] != true || st.Body["instance"] != "disabled" || st.Body["edition"] != "self-hosted" {
		t.Errorf("status = %s, want signedOff true, instance disabled", st.Raw)
	}

	writes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/mcp/servers", serverBody("docs")},
		{"POST", "/v1/mcp/servers", map[string]any{"name": "withcred", "url": "https://93.184.216.34/mcp",
			"auth": map[string]any{"type": "bearer", "token": "tok-1234567890abcdef"}, "acknowledged": true}},
		{"PATCH", "/v1/mcp/servers/" + sid, map[string]any{"enabled": false}},
		{"PATCH", "/v1/mcp/servers/" + sid, map[string]any{"name": "renamed"}},
		{"PATCH", "/v1/mcp/servers/" + sid, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true}},
		{"PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "off"}}},
		{"PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}}}},
		{"PUT", "/v1/repositories/" + rid + "/policy", map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}}}},
		{"PUT", "/v1/repositories/" + rid + "/policy", map[string]any{"mcp": map[string]any{"mode": "off"}}},
		{"POST", "/v1/mcp/servers/" + sid + "/discover", nil},
		{"PUT", "/v1/mcp/servers/" + sid + "/tools", map[string]any{"tools": []any{}}},
		// The gates answer before the body is read.
		{"POST", "/v1/mcp/servers", `{"name": `},
		{"PATCH", "/v1/mcp/servers/" + sid, map[string]any{"stdio": true}},
		{"PUT", "/v1/repositories/" + rid + "/policy", ``},
	}
	for _, w := range writes {
		expect(t, w.method+" "+w.path, d.do(w.method, w.path, w.body), 422, "instance_disabled")
	}

	// Reads still work; the policy is stored but not active here.
	g := d.do("GET", "/v1/mcp/servers/"+sid, nil)
	expect(t, "GET server", g, 200, "")
	if g.Body["enabled"] != true || str(g.Body, "name") != "wiki" {
		t.Errorf("a refused PATCH changed the server: %s", g.Raw)
	}
	if n := len(listServers(t, d)); n != 1 {
		t.Errorf("list has %d servers, want 1", n)
	}
	p := d.do("GET", "/v1/repositories/"+rid+"/policy", nil)
	expect(t, "GET policy", p, 200, "")
	if stored, _, active := policyOf(t, p); stored["mode"] != "on" || active != false {
		t.Errorf("policy on the disabled instance = %s, want stored on and mcpActive false", p.Raw)
	}
	// Repositories are not MCP changes.
	expect(t, "create repository", d.do("POST", "/v1/repositories", map[string]any{"name": "acme/web", "visibility": "internal"}), 201, "")

	// Delete is never gated.
	expect(t, "DELETE unknown", d.do("DELETE", "/v1/mcp/servers/"+randomUUID(), nil), 404, "not_found")
	expect(t, "DELETE existing", d.do("DELETE", "/v1/mcp/servers/"+sid, nil), 204, "")
	expect(t, "GET after DELETE", d.do("GET", "/v1/mcp/servers/"+sid, nil), 404, "not_found")
	expect(t, "GET after DELETE on the allowing instance", a.do("GET", "/v1/mcp/servers/"+sid, nil), 404, "not_found")
	au := d.do("GET", "/v1/audit?limit=1", nil)
	if ev := au.Body["events"].([]any); len(ev) != 1 || ev[0].(map[string]any)["action"] != "server.delete" {
		t.Errorf("the newest audit event is not the delete: %s", au.Raw)
	}
}

// TestChecksURLsPerEditionEnterprise: the enterprise edition ignores the
// private-host list.
func TestChecksURLsPerEditionEnterprise(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	in := startInstance(t, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_EDITION=enterprise",
		"QUAVON_MCP_PRIVATE_HOSTS=localhost,127.0.0.1,10.0.0.5", "QUAVON_ENCRYPTION_KEYS=k1:"+key)
	_, c := in.tenant("enterprise", "tenant:manage")
	if st := c.do("GET", "/v1/mcp/status", nil); st.Body["edition"] != "enterprise" {
		t.Errorf("status = %s, want edition enterprise", st.Raw)
	}
	urls := []struct{ url, host string }{
		{"https://localhost:8443/mcp", "localhost"},
		{"https://localhost/mcp", "localhost"},
		{"https://127.0.0.1/mcp", "127.0.0.1"},
		{"https://10.0.0.5/mcp", "10.0.0.5"},
	}
	urls = append(urls, blockedURLs...)
	for _, u := range urls {
		body := serverBody("ent")
		body["url"] = u.url
		r := c.do("POST", "/v1/mcp/servers", body)
		expect(t, "enterprise: POST "+u.url, r, 422, "endpoint_not_public")
		expectNoEcho(t, u.url, r, u.url, u.host, "https://")
	}
	expect(t, "enterprise: public address", c.do("POST", "/v1/mcp/servers", serverBody("public")), 201, "")
	// A URL change to a listed private host is refused too.
	s := listServers(t, c)[0].(map[string]any)
	expect(t, "enterprise: PATCH to localhost", c.do("PATCH", "/v1/mcp/servers/"+str(s, "id"),
		map[string]any{"url": "https://localhost:8443/mcp", "acknowledged": true}), 422, "endpoint_not_public")
}

// TestCredentialsWithoutKeys: without QUAVON_ENCRYPTION_KEYS a credential
// cannot be stored: a clear 503 keys_unavailable, no crash, and servers
// without a credential still work.
func TestCredentialsWithoutKeys(t *testing.T) {
	t.Parallel()
	in := startInstance(t, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_ENCRYPTION_KEYS=")
	_, c := in.tenant("nokeys", "tenant:manage")
	const canary = "cnry-nokeys-B3n5M7q9-nk01"
	in.secret(canary)
	t.Cleanup(func() { in.checkLogsHoldNoSecrets(t) })

	for _, auth := range []map[string]any{
		{"type": "bearer", "token": canary},
		{"type": "header", "name": "x-api-key", "value": canary},
	} {
		body := serverBody("withcred")
		body["auth"] = auth
		r := c.do("POST", "/v1/mcp/servers", body)
		expect(t, "create with a credential", r, 503, "keys_unavailable")
		expectNoEcho(t, "keys_unavailable", r, canary)
	}
	s := c.do("POST", "/v1/mcp/servers", serverBody("plain"))
	expect(t, "create without a credential", s, 201, "")
	r := c.do("PATCH", "/v1/mcp/servers/"+str(s.Body, "id"), map[string]any{"auth": map[string]any{"type": "bearer", "token": canary}})
	expect(t, "PATCH a credential in", r, 503, "keys_unavailable")
	expectNoEcho(t, "keys_unavailable", r, canary)
	// Still serving, nothing half-stored.
	g := c.do("GET", "/v1/mcp/servers/"+str(s.Body, "id"), nil)
	if g.Status != 200 || str(g.Body, "auth", "type") != "none" {
		t.Errorf("after the refused PATCH: %d %s", g.Status, g.Raw)
	}
	if n := len(listServers(t, c)); n != 1 {
		t.Errorf("list has %d servers, want 1", n)
	}
	if strings.Contains(in.logs.String(), "goroutine ") || strings.Contains(in.logs.String(), "panic") {
		t.Errorf("the instance logged a panic:\n%s", in.logs.String())
	}
	// keys rotate without keys is a one-line error.
	_, stderr, err := in.tryCLI("keys", "rotate")
	if err == nil || len(errorLines(stderr)) != 1 {
		t.Errorf("keys rotate without keys: %v, stderr %q", err, stderr)
	}
}

var rotatedLine = regexp.MustCompile(`rotated: (\d+)`)

// TestKeyRotation: encrypt under k1, add k2 as primary, rotate (idempotent),
// remove k1: the credential still decrypts under k2 alone, and no longer
// under k1.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	k1, b1 := newKey(t)
	k2, b2 := newKey(t)
	in := startInstance(t, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_ENCRYPTION_KEYS=k1:"+b1)
	tenantID, c := in.tenant("rotation", "tenant:manage")
	const secret = "cnry-rotate-H2j4K6l8-rot1"
	in.secret(secret, b1, b2)
	s := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "rotated", "url": "https://93.184.216.34/mcp",
		"auth": map[string]any{"type": "bearer", "token": secret}, "acknowledged": true})
	expect(t, "create with bearer", s, 201, "")
	expect(t, "create without credential", c.do("POST", "/v1/mcp/servers", serverBody("plain")), 201, "")
	id := str(s.Body, "id")

	ring := func(keys ...crypto.Key) *crypto.KeyRing {
		r, err := crypto.NewKeyRing(keys)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	stored := func() []byte {
		ctx := context.Background()
		db, closeDB, err := postgres.Open(ctx, in.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer closeDB()
		var enc []byte
		err = postgres.NewTenants(db).InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
			var err error
			enc, err = tx.Servers().Credential(ctx, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	tokenOf := func(plain []byte) string {
		var v struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(plain, &v); err != nil {
			t.Fatalf("the decrypted credential is not JSON: %v", err)
		}
		return v.Token
	}
	before := stored()
	if plain, err := ring(crypto.Key{ID: "k1", Secret: k1}).Open(before, app.CredentialAAD(id)); err != nil || tokenOf(plain) != secret {
		t.Fatalf("before rotation the credential does not open under k1: %v", err)
	}

	rotate := func(keys string) (string, string, error) {
		return in.tryCLIEnv([]string{"QUAVON_ENCRYPTION_KEYS=" + keys}, "keys", "rotate")
	}
	for i, want := range []string{"1", "0"} {
		out, stderr, err := rotate("k2:" + b2 + ",k1:" + b1)
		if err != nil {
			t.Fatalf("keys rotate run %d: %v: %s", i+1, err, stderr)
		}
		m := rotatedLine.FindStringSubmatch(out)
		if m == nil || m[1] != want {
			t.Errorf("keys rotate run %d printed %q, want rotated: %s", i+1, out, want)
		}
		if strings.Contains(out+stderr, secret) {
			t.Errorf("keys rotate printed the secret")
		}
	}

	after := stored()
	if string(after) == string(before) {
		t.Fatal("the stored credential did not change")
	}
	plain, err := ring(crypto.Key{ID: "k2", Secret: k2}).Open(after, app.CredentialAAD(id))
	if err != nil {
		t.Fatalf("after rotation the credential does not open under k2 alone: %v", err)
	}
	if tokenOf(plain) != secret {
		t.Errorf("the decrypted token differs from the original")
	}
	if _, err := ring(crypto.Key{ID: "k1", Secret: k1}).Open(after, app.CredentialAAD(id)); err == nil {
		t.Errorf("after rotation the credential still opens under k1 alone")
	}
	// Bound to its row: the same ciphertext does not open as another server's.
	if _, err := ring(crypto.Key{ID: "k2", Secret: k2}).Open(after, app.CredentialAAD(randomUUID())); err == nil {
		t.Errorf("the credential opens with another server's associated data")
	}
	// k2 under the id k1 is not k1.
	if _, err := ring(crypto.Key{ID: "k1", Secret: k2}).Open(after, app.CredentialAAD(id)); err == nil {
		t.Errorf("the credential opens under the wrong key id")
	}

	// With k2 alone the rotation has nothing left to do; with k1 alone it
	// cannot open the credential and says so in one line.
	if out, stderr, err := rotate("k2:" + b2); err != nil || rotatedLine.FindStringSubmatch(out)[1] != "0" {
		t.Errorf("keys rotate with k2 alone: %v %q %q", err, out, stderr)
	}
	out, stderr, err := rotate("k1:" + b1)
	if err == nil {
		t.Errorf("keys rotate with k1 alone after the rotation succeeded: %q", out)
	}
	if lines := errorLines(stderr); len(lines) != 1 || strings.Contains(stderr, secret) || strings.Contains(stderr, "panic") {
		t.Errorf("keys rotate with k1 alone: stderr %q, want one line", stderr)
	}
}
