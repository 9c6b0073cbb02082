//go:build signedoff

package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminAPI drives the admin REST API of a signed-off build on an
// instance that allows MCP context, lists localhost as a private host and
// has a key ring. The subtests share the instance (each uses its own
// tenants) and run in parallel; when they are done, the instance's logs
// must not contain any token or credential they used.
func TestAdminAPI(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	// The subtests try unknown tokens on every route in parallel from one
	// address: the limit on failed authentications is raised for them
	// (TestE2ETokenLifecycle tests the default).
	in := startInstance(t, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_MCP_PRIVATE_HOSTS=localhost",
		"QUAVON_ENCRYPTION_KEYS=k1:"+key, "QUAVON_AUTH_FAILURE_LIMIT=100000")
	in.secret(key)
	t.Cleanup(func() { in.checkLogsHoldNoSecrets(t) })

	tests := []struct {
		name string
		fn   func(t *testing.T, in *instance)
	}{
		{"authentication", testAuthentication},
		{"request log", testRequestLog},
		{"status", testStatus},
		{"registers servers", testRegistersServers},
		{"checks URLs per edition (self-hosted, localhost listed)", testChecksURLsSelfHosted},
		{"URL schema", testURLSchema},
		{"refuses command or stdio fields (strict create schema)", testStrictCreateSchema},
		{"bad JSON", testBadJSON},
		{"stores credentials encrypted and exposes only a hint", testCredentialsEncrypted},
		{"OAuth credentials: views, save-time checks, nothing secret stored in clear", testOAuthCredentials},
		{"refuses header names outside x-*", testHeaderNames},
		{"409 name_taken", testNameTaken},
		{"409 on the 21st server", testTooManyServers},
		{"409 on the 21st server under concurrency", testTooManyServersConcurrent},
		{"URL changes", testURLChanges},
		{"hides servers of other tenants", testHidesServersOfOtherTenants},
		{"row-level security at the SQL level", testRLSAtSQLLevel},
		{"repositories", testRepositories},
		{"repository policy", testRepositoryPolicy},
		{"tenant defaults and inherit", testTenantDefaults},
		{"policy after its server is deleted", testPolicyAfterServerDelete},
		{"audit", testAudit},
		{"CLI tenants and tokens", testCLITenantsAndTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, in.on(t))
		})
	}
}

func testAuthentication(t *testing.T, in *instance) {
	tenantID, full := in.tenant("auth", "tenant:manage,repo:manage")
	repoOnly := in.token(tenantID, "repo:manage")
	tenantOnly := in.token(tenantID, "tenant:manage")
	repo := full.do("POST", "/v1/repositories", map[string]any{"name": "acme/auth", "visibility": "private"})
	expect(t, "create repository", repo, 201, "")
	repoID := str(repo.Body, "id")
	srv := full.do("POST", "/v1/mcp/servers", serverBody("authsrv"))
	expect(t, "create server", srv, 201, "")
	srvID := str(srv.Body, "id")

	unknownToken := "clt_" + strings.Repeat("Q", 43)
	anonymous := &client{in: in}
	unknown := &client{in: in, token: unknownToken}
	all := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/mcp/status", nil},
		{"GET", "/v1/mcp/servers", nil},
		{"POST", "/v1/mcp/servers", serverBody("anon")},
		{"GET", "/v1/mcp/servers/" + srvID, nil},
		{"PATCH", "/v1/mcp/servers/" + srvID, map[string]any{"enabled": false}},
		{"DELETE", "/v1/mcp/servers/" + srvID, nil},
		{"POST", "/v1/mcp/servers/" + srvID + "/discover", nil},
		{"PUT", "/v1/mcp/servers/" + srvID + "/tools", map[string]any{"tools": []any{}}},
		{"GET", "/v1/mcp/servers/" + srvID + "/calls", nil},
		{"GET", "/v1/mcp/defaults", nil},
		{"PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "off"}}},
		{"POST", "/v1/repositories", map[string]any{"name": "acme/anon", "visibility": "private"}},
		{"GET", "/v1/repositories/" + repoID, nil},
		{"PATCH", "/v1/repositories/" + repoID, map[string]any{"visibility": "public"}},
		{"GET", "/v1/repositories/" + repoID + "/policy", nil},
		{"PUT", "/v1/repositories/" + repoID + "/policy", map[string]any{"mcp": map[string]any{"mode": "off"}}},
		{"GET", "/v1/audit", nil},
	}
	for _, e := range all {
		expect(t, "no token: "+e.method+" "+e.path, anonymous.do(e.method, e.path, e.body), 401, "unauthenticated")
		r := unknown.do(e.method, e.path, e.body)
		expect(t, "unknown token: "+e.method+" "+e.path, r, 401, "unauthenticated")
		expectNoEcho(t, "unknown token", r, unknownToken)
	}

	// repo:manage alone: nothing under /v1/mcp but the status, no repository creation.
	for _, e := range all {
		isPolicy := strings.HasSuffix(e.path, "/policy")
		if e.path == "/v1/mcp/status" || isPolicy {
			continue
		}
		expect(t, "repo:manage token: "+e.method+" "+e.path, repoOnly.do(e.method, e.path, e.body), 403, "forbidden")
	}
	// tenant:manage alone: no repository policy.
	for _, e := range all {
		if strings.HasSuffix(e.path, "/policy") {
			expect(t, "tenant:manage token: "+e.method+" "+e.path, tenantOnly.do(e.method, e.path, e.body), 403, "forbidden")
		}
	}
	// Nothing changed behind the refusals.
	s := full.do("GET", "/v1/mcp/servers/"+srvID, nil)
	expect(t, "server after refused calls", s, 200, "")
	if s.Body["enabled"] != true {
		t.Errorf("a refused PATCH changed the server: %s", s.Raw)
	}
	if r := full.do("GET", "/v1/repositories/"+repoID, nil); str(r.Body, "visibility") != "private" {
		t.Errorf("a refused PATCH changed the repository: %s", r.Raw)
	}

	// What each token may do.
	expect(t, "repo:manage: status", repoOnly.do("GET", "/v1/mcp/status", nil), 200, "")
	expect(t, "repo:manage: GET policy", repoOnly.do("GET", "/v1/repositories/"+repoID+"/policy", nil), 200, "")
	expect(t, "repo:manage: PUT policy", repoOnly.do("PUT", "/v1/repositories/"+repoID+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "off"}}), 200, "")
	expect(t, "tenant:manage: status", tenantOnly.do("GET", "/v1/mcp/status", nil), 200, "")
	expect(t, "tenant:manage: list servers", tenantOnly.do("GET", "/v1/mcp/servers", nil), 200, "")
	expect(t, "tenant:manage: create repository", tenantOnly.do("POST", "/v1/repositories",
		map[string]any{"name": "acme/tm", "visibility": "internal"}), 201, "")
}

// logLine is one line of the request log.
type logLine map[string]any

func (in *instance) requestLines() map[string][]logLine {
	out := map[string][]logLine{}
	for _, raw := range strings.Split(in.logs.String(), "\n") {
		var l logLine
		if json.Unmarshal([]byte(raw), &l) != nil || l["message"] != "request" {
			continue
		}
		id, _ := l["request_id"].(string)
		out[id] = append(out[id], l)
	}
	return out
}

func testRequestLog(t *testing.T, in *instance) {
	tenantID, c := in.tenant("logs", "tenant:manage,repo:manage")
	const canary = "cnry-logbearer-K2v8R5t1-lgzz"
	const header = "cnry-logheader-J4h6W9q3-lgyy"
	in.secret(canary, header, "cnry-logbearer-K2v8R5t1", "cnry-logheader-J4h6W9q3")
	type sent struct {
		method, route string
		status        int
		tenant        string
		id            string
	}
	var reqs []sent
	call := func(c *client, method, path, route string, body any, status int, tenant string) response {
		r := c.do(method, path, body)
		if r.Status != status {
			t.Errorf("%s %s = %d, want %d: %s", method, path, r.Status, status, r.Raw)
		}
		id := r.Header.Get("X-Request-Id")
		if id == "" {
			t.Errorf("%s %s: no X-Request-Id header", method, path)
		}
		reqs = append(reqs, sent{method, route, status, tenant, id})
		return r
	}
	s := call(c, "POST", "/v1/mcp/servers", "POST /v1/mcp/servers", map[string]any{
		"name": "logsrv_body_marker", "url": "https://93.184.216.34/mcp-path-marker",
		"auth": map[string]any{"type": "bearer", "token": canary}, "acknowledged": true}, 201, tenantID)
	id := str(s.Body, "id")
	call(c, "PATCH", "/v1/mcp/servers/"+id, "PATCH /v1/mcp/servers/{id}",
		map[string]any{"auth": map[string]any{"type": "header", "name": "x-log-key", "value": header}}, 200, tenantID)
	call(c, "GET", "/v1/mcp/servers/"+id, "GET /v1/mcp/servers/{id}", nil, 200, tenantID)
	call(c, "GET", "/v1/mcp/servers/"+randomUUID(), "GET /v1/mcp/servers/{id}", nil, 404, tenantID)
	call(c, "POST", "/v1/mcp/servers", "POST /v1/mcp/servers", `{"name": "bad_json_marker", `, 400, tenantID)
	call(&client{in: in}, "GET", "/v1/mcp/servers", "GET /v1/mcp/servers", nil, 401, "")
	call(c, "GET", "/v1/audit?limit=5", "GET /v1/audit", nil, 200, tenantID)

	// The line is written after the response: wait for all of them.
	var lines map[string][]logLine
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines = in.requestLines()
		missing := 0
		for _, r := range reqs {
			if len(lines[r.id]) == 0 {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range reqs {
		got := lines[r.id]
		if len(got) != 1 {
			t.Errorf("%s %s: %d request log lines with request_id %q, want 1", r.method, r.route, len(got), r.id)
			continue
		}
		l := got[0]
		if l["method"] != r.method || l["route"] != r.route || l["status"] != float64(r.status) || l["tenant_id"] != r.tenant {
			t.Errorf("request log line %v, want method %s route %q status %d tenant_id %q", l, r.method, r.route, r.status, r.tenant)
		}
		if _, ok := l["duration"].(float64); !ok {
			t.Errorf("request log line %v has no numeric duration", l)
		}
	}
	logs := in.logs.String()
	for _, secret := range []string{canary, header, c.token, "cnry-logbearer", "cnry-logheader",
		"logsrv_body_marker", "mcp-path-marker", "bad_json_marker", "Bearer "} {
		if strings.Contains(logs, secret) {
			t.Errorf("the instance logs contain %q (a token, a credential or a body)", secret)
		}
	}
}

func testStatus(t *testing.T, in *instance) {
	_, c := in.tenant("status", "repo:manage")
	r := c.do("GET", "/v1/mcp/status", nil)
	expect(t, "GET /v1/mcp/status", r, 200, "")
	if r.Body["signedOff"] != true || r.Body["instance"] != "allowed" || r.Body["edition"] != "self-hosted" {
		t.Errorf("status = %s, want signedOff true, instance allowed, edition self-hosted", r.Raw)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(in.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s without a token = %d, want 200", path, resp.StatusCode)
		}
	}
}
