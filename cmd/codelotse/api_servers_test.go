//go:build signedoff

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

func testRegistersServers(t *testing.T, in *instance) {
	_, c := in.tenant("register", "tenant:manage")
	before := time.Now().Add(-time.Second)
	r := c.do("POST", "/v1/mcp/servers", serverBody("wiki"))
	expect(t, "POST /v1/mcp/servers", r, 201, "")
	b := r.Body
	if _, err := uuid.Parse(str(b, "id")); err != nil {
		t.Errorf("id %q is not a UUID", str(b, "id"))
	}
	if str(b, "name") != "wiki" || str(b, "url") != "https://93.184.216.34/mcp" || b["enabled"] != true ||
		str(b, "auth", "type") != "none" || b["lastDiscoveryAt"] != nil || b["lastError"] != nil {
		t.Errorf("ServerView = %s", r.Raw)
	}
	if _, has := b["auth"].(map[string]any)["hint"]; has {
		t.Errorf("a server without a credential has a hint: %s", r.Raw)
	}
	if tools, ok := b["tools"].([]any); !ok || len(tools) != 0 {
		t.Errorf("tools = %v, want []", b["tools"])
	}
	for _, f := range []string{"acknowledgedAt", "createdAt", "updatedAt"} {
		at, err := time.Parse(time.RFC3339Nano, str(b, f))
		if err != nil || at.Before(before) {
			t.Errorf("%s = %q, want a recent RFC 3339 time", f, str(b, f))
		}
	}
	id := str(b, "id")
	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	expect(t, "GET /v1/mcp/servers/{id}", g, 200, "")
	// The write's answer is the stored server, times included (PostgreSQL
	// keeps microseconds: a nanosecond time in the POST answer is a time
	// no later read will ever show).
	if !bytes.Equal(g.Raw, r.Raw) {
		t.Errorf("GET answers %s, POST answered %s", g.Raw, r.Raw)
	}
	if u := c.do("GET", "/v1/mcp/servers/"+strings.ToUpper(id), nil); u.Status != 200 {
		t.Errorf("GET with the id in upper case = %d", u.Status)
	}

	// A host listed in QUAVON_MCP_PRIVATE_HOSTS may resolve to loopback.
	l := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "local", "url": "https://localhost:8443/mcp",
		"auth": map[string]any{"type": "none"}, "acknowledged": true})
	expect(t, "POST https://localhost:8443/mcp (listed)", l, 201, "")
	if str(l.Body, "url") != "https://localhost:8443/mcp" {
		t.Errorf("url = %q", str(l.Body, "url"))
	}

	// The acknowledgement is required on create.
	for _, ack := range []any{false, nil} {
		body := serverBody("noack")
		if ack == nil {
			delete(body, "acknowledged")
		} else {
			body["acknowledged"] = ack
		}
		expect(t, fmt.Sprintf("create with acknowledged %v", ack), c.do("POST", "/v1/mcp/servers", body), 422, "acknowledgement_required")
	}

	// Field rules of the name.
	for _, name := range []string{"", "Wiki", "1wiki", "wi-ki", "a" + strings.Repeat("b", 24)} {
		expectField(t, fmt.Sprintf("name %q", name), c.do("POST", "/v1/mcp/servers", serverBody(name)), "name")
	}
	expect(t, "name of 24 characters", c.do("POST", "/v1/mcp/servers", serverBody("a"+strings.Repeat("b", 23))), 201, "")

	list := c.do("GET", "/v1/mcp/servers", nil)
	expect(t, "GET /v1/mcp/servers", list, 200, "")
	if n := len(list.Body["servers"].([]any)); n != 3 {
		t.Errorf("list has %d servers, want 3: %s", n, list.Raw)
	}

	// Deleting: 204 without a body, then 404.
	d := c.do("DELETE", "/v1/mcp/servers/"+id, nil)
	expect(t, "DELETE", d, 204, "")
	if len(d.Raw) != 0 {
		t.Errorf("DELETE answered a body: %q", d.Raw)
	}
	expect(t, "GET after DELETE", c.do("GET", "/v1/mcp/servers/"+id, nil), 404, "not_found")
	expect(t, "DELETE again", c.do("DELETE", "/v1/mcp/servers/"+id, nil), 404, "not_found")
	expect(t, "PATCH after DELETE", c.do("PATCH", "/v1/mcp/servers/"+id, map[string]any{"enabled": false}), 404, "not_found")
	expect(t, "GET a malformed id", c.do("GET", "/v1/mcp/servers/not-a-uuid", nil), 404, "not_found")
}

// blockedURLs resolve (or are) addresses that are never public.
var blockedURLs = []struct{ url, host string }{
	{"https://127.0.0.1/mcp", "127.0.0.1"},
	{"https://10.0.0.5/mcp", "10.0.0.5"},
	{"https://[::1]/mcp", "::1"},
	{"https://[fd00::1]/mcp", "fd00::1"},
	{"https://169.254.169.254/", "169.254.169.254"},
	{"https://[fd00:ec2::254]/", "fd00:ec2::254"},
	{"https://224.0.0.1/mcp", "224.0.0.1"},
	{"https://0.0.0.1/mcp", "0.0.0.1"},
	{"https://192.168.1.20:8443/mcp", "192.168.1.20"},
}

func testChecksURLsSelfHosted(t *testing.T, in *instance) {
	_, c := in.tenant("urls-self-hosted", "tenant:manage")
	for i, b := range blockedURLs {
		body := serverBody(fmt.Sprintf("blocked%d", i))
		body["url"] = b.url
		r := c.do("POST", "/v1/mcp/servers", body)
		expect(t, "POST "+b.url, r, 422, "endpoint_not_public")
		expectNoEcho(t, "POST "+b.url, r, b.url, b.host, "https://")
	}
	for i, u := range []string{"https://93.184.216.34/mcp", "https://[2606:2800:220:1:248:1893:25c8:1946]/mcp",
		"https://localhost/mcp", "https://LOCALHOST:8443/x"} {
		body := serverBody(fmt.Sprintf("public%d", i))
		body["url"] = u
		expect(t, "POST "+u, c.do("POST", "/v1/mcp/servers", body), 201, "")
	}
}

func testURLSchema(t *testing.T, in *instance) {
	_, c := in.tenant("url-schema", "tenant:manage")
	long := "https://93.184.216.34/" + strings.Repeat("a", 2049-len("https://93.184.216.34/"))
	if len(long) != 2049 {
		t.Fatal(len(long))
	}
	invalid := []struct{ name, url string }{
		{"http", "http://93.184.216.34/mcp"},
		{"no scheme", "93.184.216.34/mcp"},
		{"ftp", "ftp://93.184.216.34/mcp"},
		{"userinfo", "https://admin:hunter2pw@93.184.216.34/mcp"},
		{"empty userinfo", "https://@93.184.216.34/mcp"},
		{"query", "https://93.184.216.34/mcp?token=qsecret42"},
		{"empty query", "https://93.184.216.34/mcp?"},
		{"fragment", "https://93.184.216.34/mcp#fragsecret42"},
		{"overlong (2,049 characters)", long},
		{"no host", "https:///mcp"},
		{"bad port", "https://93.184.216.34:99999/mcp"},
		{"ambiguous numeric host", "https://2130706433/mcp"},
		{"hex host", "https://0x7f.1/mcp"},
		{"IPv6 zone", "https://[fe80::1%25eth0]/mcp"},
		{"invalid IDN", "https://xn--zz.invalid/mcp"},
		{"space", "https://93.184.216.34/m cp"},
		{"empty", ""},
	}
	for _, tt := range invalid {
		body := serverBody("schema")
		body["url"] = tt.url
		r := c.do("POST", "/v1/mcp/servers", body)
		expectField(t, tt.name, r, "url")
		expectNoEcho(t, tt.name, r, tt.url, "hunter2pw", "qsecret42", "fragsecret42", "93.184.216.34", "xn--zz")
	}
	// Exactly 2,048 characters is accepted.
	body := serverBody("maxlen")
	body["url"] = long[:2048]
	r := c.do("POST", "/v1/mcp/servers", body)
	expect(t, "URL of 2,048 characters", r, 201, "")
	if str(r.Body, "url") != long[:2048] {
		t.Errorf("stored url differs")
	}
	// A valid IDN host needs DNS: an unresolvable one is not public, and
	// the error names neither the Unicode nor the punycode form.
	body = serverBody("idn")
	body["url"] = "https://bücher.invalid/mcp"
	r = c.do("POST", "/v1/mcp/servers", body)
	expect(t, "unresolvable IDN", r, 422, "endpoint_not_public")
	expectNoEcho(t, "unresolvable IDN", r, "bücher", "xn--bcher", "invalid/mcp", "https://")
	// Normalisation: the default port is dropped, the host lower-cased.
	body = serverBody("normal")
	body["url"] = "HTTPS://LocalHost:443/Mcp"
	r = c.do("POST", "/v1/mcp/servers", body)
	expect(t, "normalised URL", r, 201, "")
	if got := str(r.Body, "url"); got != "https://localhost/Mcp" {
		t.Errorf("url = %q, want https://localhost/Mcp", got)
	}
}

func testStrictCreateSchema(t *testing.T, in *instance) {
	_, c := in.tenant("strict", "tenant:manage")
	extras := []struct {
		name  string
		patch func(b map[string]any)
	}{
		{"command", func(b map[string]any) { b["command"] = []string{"npx", "-y", "some-mcp-server"} }},
		{"command string", func(b map[string]any) { b["command"] = "/bin/sh -c id" }},
		{"stdio", func(b map[string]any) { b["stdio"] = true }},
		{"transport stdio", func(b map[string]any) { b["transport"] = "stdio" }},
		{"args", func(b map[string]any) { b["args"] = []string{"--port", "1"} }},
		{"env", func(b map[string]any) { b["env"] = map[string]string{"A": "b"} }},
		{"command inside auth", func(b map[string]any) { b["auth"] = map[string]any{"type": "none", "command": "id"} }},
		{"id", func(b map[string]any) { b["id"] = randomUUID() }},
		{"tools", func(b map[string]any) { b["tools"] = []any{} }},
	}
	for _, tt := range extras {
		body := serverBody("strict")
		tt.patch(body)
		expect(t, "create with "+tt.name, c.do("POST", "/v1/mcp/servers", body), 400, "bad_json")
	}
	// PATCH is strict too.
	s := c.do("POST", "/v1/mcp/servers", serverBody("strictok"))
	expect(t, "create", s, 201, "")
	id := str(s.Body, "id")
	for _, body := range []map[string]any{{"command": "id"}, {"stdio": true}, {"enabled": false, "transport": "stdio"}} {
		expect(t, fmt.Sprintf("PATCH %v", body), c.do("PATCH", "/v1/mcp/servers/"+id, body), 400, "bad_json")
	}
	if list := c.do("GET", "/v1/mcp/servers", nil); len(list.Body["servers"].([]any)) != 1 {
		t.Errorf("a refused create stored a server: %s", list.Raw)
	}
}

func testBadJSON(t *testing.T, in *instance) {
	tenantID, c := in.tenant("badjson", "tenant:manage,repo:manage")
	_ = tenantID
	repo := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/badjson", "visibility": "private"})
	expect(t, "create repository", repo, 201, "")
	srv := c.do("POST", "/v1/mcp/servers", serverBody("badjson"))
	expect(t, "create server", srv, 201, "")
	big := `{"name": "big", "url": "https://93.184.216.34/` + strings.Repeat("a", 64<<10) + `", "auth": {"type": "none"}, "acknowledged": true}`
	bodies := []struct{ name, body string }{
		{"malformed", `{"name": "x",`},
		{"not JSON", `name=x`},
		{"empty", ``},
		{"array", `[]`},
		{"trailing object", `{"name": "x1", "url": "https://93.184.216.34/mcp", "auth": {"type": "none"}, "acknowledged": true}{}`},
		{"trailing garbage", `{"name": "x2", "url": "https://93.184.216.34/mcp", "auth": {"type": "none"}, "acknowledged": true} x`},
		{"over 64 KiB", big},
		{"wrong types", `{"name": 1, "url": ["x"], "acknowledged": "yes", "visibility": 2, "mcp": "on", "enabled": "no"}`},
	}
	endpoints := []struct{ method, path string }{
		{"POST", "/v1/mcp/servers"},
		{"PATCH", "/v1/mcp/servers/" + str(srv.Body, "id")},
		{"PUT", "/v1/mcp/defaults"},
		{"POST", "/v1/repositories"},
		{"PATCH", "/v1/repositories/" + str(repo.Body, "id")},
		{"PUT", "/v1/repositories/" + str(repo.Body, "id") + "/policy"},
	}
	for _, e := range endpoints {
		for _, b := range bodies {
			expect(t, e.method+" "+e.path+" "+b.name, c.do(e.method, e.path, b.body), 400, "bad_json")
		}
	}
	// Unknown fields elsewhere.
	expect(t, "policy with an unknown field", c.do("PUT", "/v1/repositories/"+str(repo.Body, "id")+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "off", "command": "id"}}), 400, "bad_json")
	expect(t, "repository with an unknown field", c.do("POST", "/v1/repositories",
		map[string]any{"name": "acme/x", "visibility": "private", "owner": "me"}), 400, "bad_json")
	// A body just under the limit is read (and judged on its fields).
	under := `{"name": "under", "url": "https://93.184.216.34/` + strings.Repeat("a", 60<<10) + `", "auth": {"type": "none"}, "acknowledged": true}`
	expectField(t, "60 KiB body with an overlong URL", c.do("POST", "/v1/mcp/servers", under), "url")
	if list := c.do("GET", "/v1/mcp/servers", nil); len(list.Body["servers"].([]any)) != 1 {
		t.Errorf("a refused body stored a server: %s", list.Raw)
	}
}

func testCredentialsEncrypted(t *testing.T, in *instance) {
	_, c := in.tenant("credentials", "tenant:manage")
	const (
		bearerPrefix  = "cnry-bearer-Q7w9Z2x4"
		bearer        = bearerPrefix + "-wxyz"
		headerPrefix  = "cnry-header-P3k8M1n6"
		headerValue   = headerPrefix + "-abcd"
		rotatedPrefix = "cnry-rotated-T5y7U9i1"
		rotated       = rotatedPrefix + "-mnop"
	)
	canaries := []string{bearerPrefix, headerPrefix, rotatedPrefix}
	in.secret(bearer, headerValue, rotated)
	in.secret(canaries...)

	b := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "bearer", "url": "https://93.184.216.34/mcp",
		"auth": map[string]any{"type": "bearer", "token": bearer}, "acknowledged": true})
	expect(t, "create with bearer", b, 201, "")
	if got := b.Body["auth"]; fmt.Sprint(got) != fmt.Sprint(map[string]any{"type": "bearer", "hint": "Bearer …wxyz"}) {
		t.Errorf("auth = %v, want bearer with hint \"Bearer …wxyz\"", got)
	}
	h := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "header", "url": "https://localhost:8443/mcp",
		"auth": map[string]any{"type": "header", "name": "X-Api-Key", "value": headerValue}, "acknowledged": true})
	expect(t, "create with header", h, 201, "")
	if got := h.Body["auth"]; fmt.Sprint(got) != fmt.Sprint(map[string]any{"type": "header", "hint": "x-api-key …abcd"}) {
		t.Errorf("auth = %v, want header with hint \"x-api-key …abcd\"", got)
	}
	bid, hid := str(b.Body, "id"), str(h.Body, "id")

	views := []response{b, h,
		c.do("GET", "/v1/mcp/servers/"+bid, nil),
		c.do("GET", "/v1/mcp/servers/"+hid, nil),
		c.do("GET", "/v1/mcp/servers", nil),
		c.do("PATCH", "/v1/mcp/servers/"+bid, map[string]any{"enabled": false}),
		c.do("PATCH", "/v1/mcp/servers/"+hid, map[string]any{"name": "header2"}),
	}
	for i, v := range views {
		if v.Status >= 300 {
			t.Errorf("view %d = %d %s", i, v.Status, v.Raw)
		}
		expectNoEcho(t, fmt.Sprintf("view %d", i), v, canaries...)
	}
	if p := views[5]; str(p.Body, "auth", "hint") != "Bearer …wxyz" {
		t.Errorf("PATCH enabled lost the hint: %s", p.Raw)
	}

	// A new credential by PATCH: the hint follows it.
	p := c.do("PATCH", "/v1/mcp/servers/"+bid, map[string]any{"auth": map[string]any{"type": "bearer", "token": rotated}})
	expect(t, "PATCH auth", p, 200, "")
	if str(p.Body, "auth", "hint") != "Bearer …mnop" {
		t.Errorf("hint after PATCH auth = %q", str(p.Body, "auth", "hint"))
	}
	expectNoEcho(t, "PATCH auth", p, canaries...)

	// The database holds no plaintext: neither the row as JSON nor the
	// bytes of the ciphertext contain a canary, in text or hex.
	db := in.db()
	ctx := context.Background()
	for _, id := range []string{bid, hid} {
		var rowJSON, hint string
		var enc []byte
		if err := db.QueryRow(ctx, `SELECT row_to_json(s)::text, encrypted_credentials, credential_hint
			FROM mcp_servers s WHERE id = $1`, id).Scan(&rowJSON, &enc, &hint); err != nil {
			t.Fatal(err)
		}
		if len(enc) == 0 {
			t.Errorf("server %s has no encrypted credential", id)
		}
		for _, cn := range canaries {
			if strings.Contains(rowJSON, cn) || strings.Contains(rowJSON, hex.EncodeToString([]byte(cn))) ||
				bytes.Contains(enc, []byte(cn)) {
				t.Errorf("the row of server %s holds the canary %q in plaintext: %s", id, cn, rowJSON)
			}
		}
		if hint != map[string]string{bid: "Bearer …mnop", hid: "x-api-key …abcd"}[id] {
			t.Errorf("credential_hint of %s = %q", id, hint)
		}
	}
	var audit string
	if err := db.QueryRow(ctx, `SELECT coalesce(string_agg(row_to_json(a)::text, E'\n'), '') FROM audit_events a`).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	for _, cn := range canaries {
		if strings.Contains(audit, cn) {
			t.Errorf("audit_events hold the canary %q", cn)
		}
	}

	// The audit API shows the hint at most.
	a := c.do("GET", "/v1/audit", nil)
	expect(t, "GET /v1/audit", a, 200, "")
	expectNoEcho(t, "GET /v1/audit", a, canaries...)
	if !strings.Contains(string(a.Raw), "Bearer …wxyz") {
		t.Logf("note: the audit events do not show the hint: %s", a.Raw)
	}

	// And the logs.
	logs := in.logs.String()
	for _, cn := range canaries {
		if strings.Contains(logs, cn) {
			t.Errorf("the instance logs hold the canary %q", cn)
		}
	}

	// Bad secrets are refused without echoing them.
	for _, tt := range []struct {
		name  string
		auth  map[string]any
		field string
	}{
		{"bearer with a space", map[string]any{"type": "bearer", "token": "cnry bad space token"}, "auth.token"},
		{"empty bearer", map[string]any{"type": "bearer", "token": ""}, "auth.token"},
		{"bearer with a newline", map[string]any{"type": "bearer", "token": "cnry-nl\r\nX-Evil: 1"}, "auth.token"},
		{"bearer over 4,096", map[string]any{"type": "bearer", "token": strings.Repeat("z", 4097)}, "auth.token"},
		{"header value with a newline", map[string]any{"type": "header", "name": "x-k", "value": "cnry-nl\nX-Evil: 1"}, "auth.value"},
		{"empty header value", map[string]any{"type": "header", "name": "x-k", "value": ""}, "auth.value"},
		{"unknown type", map[string]any{"type": "basic", "token": "cnry-basic-token"}, "auth.type"},
	} {
		body := serverBody("badsecret")
		body["auth"] = tt.auth
		r := c.do("POST", "/v1/mcp/servers", body)
		expectField(t, tt.name, r, tt.field)
		expectNoEcho(t, tt.name, r, "cnry", "X-Evil", strings.Repeat("z", 100))
	}
	expect(t, "bearer of 4,096 characters", c.do("POST", "/v1/mcp/servers", map[string]any{"name": "longtoken",
		"url": "https://93.184.216.34/mcp", "auth": map[string]any{"type": "bearer", "token": strings.Repeat("y", 4096)},
		"acknowledged": true}), 201, "")
}

func testHeaderNames(t *testing.T, in *instance) {
	_, c := in.tenant("headers", "tenant:manage")
	for _, name := range []string{"authorization", "Authorization", "cookie", "host", "x-", "X-", "x_api_key",
		"x-api key", "proxy-authorization", "set-cookie", "", "x-" + strings.Repeat("a", 63)} {
		body := serverBody("hdr")
		body["auth"] = map[string]any{"type": "header", "name": name, "value": "cnry-header-value-1234"}
		r := c.do("POST", "/v1/mcp/servers", body)
		expectField(t, fmt.Sprintf("header name %q", name), r, "auth.name")
		expectNoEcho(t, "header name", r, "cnry-header-value")
	}
	for i, name := range []string{"x-api-key", "X-Api-Key", "x-a", "x-" + strings.Repeat("a", 62)} {
		body := serverBody(fmt.Sprintf("hdr%d", i))
		body["auth"] = map[string]any{"type": "header", "name": name, "value": "value-123456789"}
		r := c.do("POST", "/v1/mcp/servers", body)
		expect(t, fmt.Sprintf("header name %q", name), r, 201, "")
		if want := strings.ToLower(name) + " …6789"; str(r.Body, "auth", "hint") != want {
			t.Errorf("hint = %q, want %q", str(r.Body, "auth", "hint"), want)
		}
	}
}

func testNameTaken(t *testing.T, in *instance) {
	_, c := in.tenant("names", "tenant:manage")
	_, other := in.tenant("names-other", "tenant:manage")
	expect(t, "first", c.do("POST", "/v1/mcp/servers", serverBody("dup")), 201, "")
	expect(t, "second with the same name", c.do("POST", "/v1/mcp/servers", serverBody("dup")), 409, "name_taken")
	expect(t, "same name in another tenant", other.do("POST", "/v1/mcp/servers", serverBody("dup")), 201, "")
	s := c.do("POST", "/v1/mcp/servers", serverBody("dup2"))
	expect(t, "another name", s, 201, "")
	expect(t, "rename onto a taken name", c.do("PATCH", "/v1/mcp/servers/"+str(s.Body, "id"),
		map[string]any{"name": "dup"}), 409, "name_taken")
	expect(t, "rename to itself", c.do("PATCH", "/v1/mcp/servers/"+str(s.Body, "id"),
		map[string]any{"name": "dup2"}), 200, "")
}

func listServers(t *testing.T, c *client) []any {
	t.Helper()
	r := c.do("GET", "/v1/mcp/servers", nil)
	expect(t, "GET /v1/mcp/servers", r, 200, "")
	s, _ := r.Body["servers"].([]any)
	return s
}

func testTooManyServers(t *testing.T, in *instance) {
	_, c := in.tenant("twenty", "tenant:manage")
	for i := 0; i < 20; i++ {
		expect(t, fmt.Sprintf("server %d", i+1), c.do("POST", "/v1/mcp/servers", serverBody(fmt.Sprintf("s%02d", i))), 201, "")
	}
	r := c.do("POST", "/v1/mcp/servers", serverBody("s20"))
	expect(t, "the 21st server", r, 409, "too_many_servers")
	if n := len(listServers(t, c)); n != 20 {
		t.Errorf("list has %d servers, want 20", n)
	}
	// A taken name at the limit: either conflict is a 409.
	if r := c.do("POST", "/v1/mcp/servers", serverBody("s00")); r.Status != 409 {
		t.Errorf("a taken name at the limit = %d %s, want 409", r.Status, r.Raw)
	}
	// Another tenant is not limited by this one.
	_, other := in.tenant("twenty-other", "tenant:manage")
	expect(t, "other tenant", other.do("POST", "/v1/mcp/servers", serverBody("s20")), 201, "")
	// Deleting one makes room for one.
	first := listServers(t, c)[0].(map[string]any)
	expect(t, "delete one", c.do("DELETE", "/v1/mcp/servers/"+str(first, "id"), nil), 204, "")
	expect(t, "create after delete", c.do("POST", "/v1/mcp/servers", serverBody("s20")), 201, "")
	expect(t, "and again the 21st", c.do("POST", "/v1/mcp/servers", serverBody("s21")), 409, "too_many_servers")
}

func testTooManyServersConcurrent(t *testing.T, in *instance) {
	rounds := []struct{ existing, concurrent int }{{19, 2}, {19, 2}, {15, 10}}
	for ri, round := range rounds {
		_, c := in.tenant(fmt.Sprintf("race-%d", ri), "tenant:manage")
		for i := 0; i < round.existing; i++ {
			expect(t, "setup", c.do("POST", "/v1/mcp/servers", serverBody(fmt.Sprintf("s%02d", i))), 201, "")
		}
		results := make([]response, round.concurrent)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = c.do("POST", "/v1/mcp/servers", serverBody(fmt.Sprintf("race%02d", i)))
			}()
		}
		close(start)
		wg.Wait()
		created, refused := 0, 0
		for _, r := range results {
			switch {
			case r.Status == 201:
				created++
			case r.Status == 409 && r.code() == "too_many_servers":
				refused++
			default:
				t.Errorf("round %d: concurrent create = %d %s", ri, r.Status, r.Raw)
			}
		}
		if want := 20 - round.existing; created != want || refused != round.concurrent-want {
			t.Errorf("round %d: %d created and %d refused with too_many_servers, want %d and %d",
				ri, created, refused, want, round.concurrent-want)
		}
		if n := len(listServers(t, c)); n != 20 {
			t.Errorf("round %d: list has %d servers, want 20", ri, n)
		}
	}
}

// setTools writes a tool snapshot into a server's allowlist directly, as
// a live discovery and allowlist save would (they come with a later issue).
func setTools(t *testing.T, in *instance, serverID string) {
	t.Helper()
	tools := `[{"name": "search", "description": "Searches the wiki.",
		"inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
		"annotations": {"readOnlyHint": true}, "writeCapable": false,
		"hash": "` + strings.Repeat("ab", 32) + `", "approvedAt": "2026-01-02T03:04:05Z"}]`
	if _, err := in.db().Exec(context.Background(), `UPDATE mcp_servers SET tools = $1::jsonb WHERE id = $2`, tools, serverID); err != nil {
		t.Fatal(err)
	}
}

// sameView reports whether two ServerViews are equal, times compared to
// the microsecond.
func sameView(t *testing.T, a, b response) bool {
	t.Helper()
	norm := func(r response) string {
		m := map[string]any{}
		for k, v := range r.Body {
			if s, ok := v.(string); ok && strings.HasSuffix(k, "At") {
				v = parseTime(t, s).Truncate(time.Microsecond).Format(time.RFC3339Nano)
			}
			m[k] = v
		}
		return fmt.Sprint(m)
	}
	return norm(a) == norm(b)
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("%q is not an RFC 3339 time", s)
	}
	return at
}

func toolCount(t *testing.T, r response) int {
	t.Helper()
	tools, ok := r.Body["tools"].([]any)
	if !ok {
		t.Errorf("no tools array: %s", r.Raw)
	}
	return len(tools)
}

func testURLChanges(t *testing.T, in *instance) {
	_, c := in.tenant("url-changes", "tenant:manage")
	const (
		token1 = "cnry-urlchange-one-A1b2C3d4-tok1"
		token2 = "cnry-urlchange-two-E5f6G7h8-tok2"
	)
	in.secret(token1, token2)
	s := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "moving", "url": "https://93.184.216.34/mcp",
		"auth": map[string]any{"type": "bearer", "token": token1}, "acknowledged": true})
	expect(t, "create", s, 201, "")
	id := str(s.Body, "id")
	path := "/v1/mcp/servers/" + id
	setTools(t, in, id)
	g := c.do("GET", path, nil)
	expect(t, "GET with a tool", g, 200, "")
	if toolCount(t, g) != 1 {
		t.Fatalf("the injected tool is not shown: %s", g.Raw)
	}
	ack0 := str(g.Body, "acknowledgedAt")
	unchanged := func(what string) {
		t.Helper()
		r := c.do("GET", path, nil)
		if !bytes.Equal(r.Raw, g.Raw) {
			t.Errorf("%s changed the server:\nbefore %s\nafter  %s", what, g.Raw, r.Raw)
		}
	}

	// Without the acknowledgement.
	expect(t, "URL change without acknowledged", c.do("PATCH", path, map[string]any{"url": "https://93.184.216.35/mcp"}), 422, "acknowledgement_required")
	expect(t, "URL change with acknowledged false", c.do("PATCH", path, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": false}), 422, "acknowledgement_required")
	expect(t, "port change without acknowledged", c.do("PATCH", path, map[string]any{"url": "https://93.184.216.34:8443/mcp"}), 422, "acknowledgement_required")
	expect(t, "path change without acknowledged", c.do("PATCH", path, map[string]any{"url": "https://93.184.216.34/other"}), 422, "acknowledgement_required")
	// A host change on a server with a credential needs the credential again.
	r := c.do("PATCH", path, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true})
	expect(t, "host change without auth", r, 422, "credential_required")
	expectNoEcho(t, "host change without auth", r, "93.184.216.35", token1)
	expect(t, "host change to a name without auth", c.do("PATCH", path, map[string]any{"url": "https://localhost/mcp", "acknowledged": true}), 422, "credential_required")
	expect(t, "host change with auth none", c.do("PATCH", path, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true,
		"auth": map[string]any{"type": "none"}}), 200, "")
	// That removed the credential; give it back and start again.
	r = c.do("PATCH", path, map[string]any{"url": "https://93.184.216.34/mcp", "acknowledged": true,
		"auth": map[string]any{"type": "bearer", "token": token1}})
	expect(t, "host change back with auth", r, 200, "")
	setTools(t, in, id)
	g = c.do("GET", path, nil)
	ack0 = str(g.Body, "acknowledgedAt")
	// A refused host change to a blocked address changes nothing.
	r = c.do("PATCH", path, map[string]any{"url": "https://10.0.0.5/mcp", "acknowledged": true,
		"auth": map[string]any{"type": "bearer", "token": token2}})
	expect(t, "host change to a private address", r, 422, "endpoint_not_public")
	expectNoEcho(t, "host change to a private address", r, "10.0.0.5", token2)
	unchanged("refused URL changes")

	// The same endpoint written differently is no URL change.
	r = c.do("PATCH", path, map[string]any{"url": "HTTPS://93.184.216.34:443/mcp"})
	expect(t, "same URL, other spelling, without acknowledged", r, 200, "")
	if str(r.Body, "acknowledgedAt") != ack0 || toolCount(t, r) != 1 {
		t.Errorf("an unchanged URL moved acknowledgedAt or emptied the tools: %s", r.Raw)
	}
	// Changes other than the URL keep the tools and the acknowledgement.
	r = c.do("PATCH", path, map[string]any{"enabled": false, "name": "moving2"})
	expect(t, "PATCH enabled and name", r, 200, "")
	if str(r.Body, "acknowledgedAt") != ack0 || toolCount(t, r) != 1 || r.Body["enabled"] != false || str(r.Body, "name") != "moving2" {
		t.Errorf("PATCH enabled and name: %s", r.Raw)
	}

	// A port-only change is not a host change: the acknowledgement is
	// needed, the credential is kept without auth, the tools are emptied.
	time.Sleep(5 * time.Millisecond)
	r = c.do("PATCH", path, map[string]any{"url": "https://93.184.216.34:8443/mcp", "acknowledged": true})
	expect(t, "port-only change with acknowledged, without auth", r, 200, "")
	checkMoved := func(what, url, hint string) {
		t.Helper()
		if str(r.Body, "url") != url || str(r.Body, "auth", "hint") != hint || str(r.Body, "auth", "type") != "bearer" || toolCount(t, r) != 0 {
			t.Errorf("%s: %s, want url %s, hint %q, no tools", what, r.Raw, url, hint)
		}
		if at := str(r.Body, "acknowledgedAt"); !parseTime(t, at).After(parseTime(t, ack0)) {
			t.Errorf("%s: acknowledgedAt %s did not move after %s", what, at, ack0)
		}
		ack0 = str(r.Body, "acknowledgedAt")
		// Times compared to the microsecond: the nanoseconds of a write's
		// answer are checked once, in "registers servers".
		if g := c.do("GET", path, nil); !sameView(t, g, r) {
			t.Errorf("%s: GET %s differs from PATCH %s", what, g.Raw, r.Raw)
		}
	}
	checkMoved("port-only change", "https://93.184.216.34:8443/mcp", "Bearer …tok1")
	// A path-only change likewise.
	setTools(t, in, id)
	time.Sleep(5 * time.Millisecond)
	r = c.do("PATCH", path, map[string]any{"url": "https://93.184.216.34:8443/other", "acknowledged": true})
	expect(t, "path-only change with acknowledged, without auth", r, 200, "")
	checkMoved("path-only change", "https://93.184.216.34:8443/other", "Bearer …tok1")
	// A host change with a new credential.
	setTools(t, in, id)
	time.Sleep(5 * time.Millisecond)
	r = c.do("PATCH", path, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true,
		"auth": map[string]any{"type": "bearer", "token": token2}})
	expect(t, "host change with acknowledged and auth", r, 200, "")
	checkMoved("host change", "https://93.184.216.35/mcp", "Bearer …tok2")

	// A server without a credential may change host without auth.
	n := c.do("POST", "/v1/mcp/servers", serverBody("plain"))
	expect(t, "create without credential", n, 201, "")
	r = c.do("PATCH", "/v1/mcp/servers/"+str(n.Body, "id"), map[string]any{"url": "https://localhost:8443/mcp", "acknowledged": true})
	expect(t, "host change without credential", r, 200, "")
	if str(r.Body, "url") != "https://localhost:8443/mcp" || str(r.Body, "auth", "type") != "none" {
		t.Errorf("host change without credential: %s", r.Raw)
	}
	// An empty PATCH is refused.
	expect(t, "empty PATCH", c.do("PATCH", path, map[string]any{}), 422, "validation_failed")
	expectField(t, "PATCH with a bad URL", c.do("PATCH", path, map[string]any{"url": "http://93.184.216.35/mcp", "acknowledged": true}), "url")
}
