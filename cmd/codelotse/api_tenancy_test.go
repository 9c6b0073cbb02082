//go:build signedoff

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func testHidesServersOfOtherTenants(t *testing.T, in *instance) {
	_, a := in.tenant("tenant-a", "tenant:manage,repo:manage")
	_, b := in.tenant("tenant-b", "tenant:manage,repo:manage")
	sa := a.do("POST", "/v1/mcp/servers", serverBody("secretwiki"))
	expect(t, "A creates a server", sa, 201, "")
	ra := a.do("POST", "/v1/repositories", map[string]any{"name": "acme/private-a", "visibility": "private"})
	expect(t, "A creates a repository", ra, 201, "")
	sid, rid := str(sa.Body, "id"), str(ra.Body, "id")
	expect(t, "A sets a policy", a.do("PUT", "/v1/repositories/"+rid+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}}}), 200, "")
	aServer, aPolicy := a.do("GET", "/v1/mcp/servers/"+sid, nil), a.do("GET", "/v1/repositories/"+rid+"/policy", nil)

	endpoints := []struct {
		method, path string // %s is the id
		body         any
	}{
		{"GET", "/v1/mcp/servers/%s", nil},
		{"PATCH", "/v1/mcp/servers/%s", map[string]any{"enabled": false}},
		{"PATCH", "/v1/mcp/servers/%s", map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true}},
		{"DELETE", "/v1/mcp/servers/%s", nil},
		{"POST", "/v1/mcp/servers/%s/discover", nil},
		{"PUT", "/v1/mcp/servers/%s/tools", map[string]any{"tools": []any{}}},
		{"GET", "/v1/mcp/servers/%s/calls", nil},
		{"GET", "/v1/repositories/%s", nil},
		{"PATCH", "/v1/repositories/%s", map[string]any{"visibility": "public"}},
		{"GET", "/v1/repositories/%s/policy", nil},
		{"PUT", "/v1/repositories/%s/policy", map[string]any{"mcp": map[string]any{"mode": "off"}}},
	}
	for _, e := range endpoints {
		id := rid
		if strings.HasPrefix(e.path, "/v1/mcp/servers/") {
			id = sid
		}
		foreign := b.do(e.method, fmt.Sprintf(e.path, id), e.body)
		unknown := b.do(e.method, fmt.Sprintf(e.path, randomUUID()), e.body)
		what := e.method + " " + e.path
		expect(t, "B on A's id: "+what, foreign, 404, "not_found")
		expect(t, "B on an unknown id: "+what, unknown, 404, "not_found")
		if !bytes.Equal(foreign.Raw, unknown.Raw) {
			t.Errorf("%s: B on A's id answers %s, on an unknown id %s", what, foreign.Raw, unknown.Raw)
		}
		if foreign.Header.Get("Content-Type") != unknown.Header.Get("Content-Type") {
			t.Errorf("%s: content types differ", what)
		}
		malformed := b.do(e.method, fmt.Sprintf(e.path, "not-a-uuid"), e.body)
		expect(t, "B on a malformed id: "+what, malformed, 404, "not_found")
		expectNoEcho(t, what, foreign, id, "secretwiki", "private-a")
	}
	// A's data is untouched.
	if r := a.do("GET", "/v1/mcp/servers/"+sid, nil); !bytes.Equal(r.Raw, aServer.Raw) {
		t.Errorf("B changed A's server: %s", r.Raw)
	}
	if r := a.do("GET", "/v1/repositories/"+rid+"/policy", nil); !bytes.Equal(r.Raw, aPolicy.Raw) {
		t.Errorf("B changed A's policy: %s", r.Raw)
	}
	if r := a.do("GET", "/v1/repositories/"+rid, nil); str(r.Body, "visibility") != "private" {
		t.Errorf("B changed A's repository: %s", r.Raw)
	}

	// B's list never shows A's servers, before and after B has its own.
	if s := listServers(t, b); len(s) != 0 {
		t.Errorf("B's list shows %d servers, want none", len(s))
	}
	sb := b.do("POST", "/v1/mcp/servers", serverBody("secretwiki")) // the same name is free in B
	expect(t, "B creates a server", sb, 201, "")
	list := b.do("GET", "/v1/mcp/servers", nil)
	if n := len(list.Body["servers"].([]any)); n != 1 || strings.Contains(string(list.Raw), sid) {
		t.Errorf("B's list = %s, want only B's server", list.Raw)
	}

	// B's policy and default may not name A's server.
	rb := b.do("POST", "/v1/repositories", map[string]any{"name": "acme/private-b", "visibility": "private"})
	expect(t, "B creates a repository", rb, 201, "")
	bPolicy := "/v1/repositories/" + str(rb.Body, "id") + "/policy"
	for _, servers := range [][]string{{sid}, {str(sb.Body, "id"), sid}, {randomUUID()}, {"not-a-uuid"}} {
		r := b.do("PUT", bPolicy, map[string]any{"mcp": map[string]any{"mode": "on", "servers": servers}})
		expect(t, fmt.Sprintf("B's policy naming %v", servers), r, 422, "unknown_server")
		expectNoEcho(t, "unknown_server", r, sid)
		r = b.do("PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "on", "servers": servers}})
		expect(t, fmt.Sprintf("B's default naming %v", servers), r, 422, "unknown_server")
	}
	expect(t, "B's policy naming B's server", b.do("PUT", bPolicy,
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{str(sb.Body, "id")}}}), 200, "")

	// B's audit shows nothing of A.
	au := b.do("GET", "/v1/audit?limit=200", nil)
	expect(t, "B's audit", au, 200, "")
	if strings.Contains(string(au.Raw), sid) || strings.Contains(string(au.Raw), rid) || strings.Contains(string(au.Raw), "private-a") {
		t.Errorf("B's audit shows A's events: %s", au.Raw)
	}
}

// testRLSAtSQLLevel checks forced row-level security below the API: as
// the tenant role, with tenant B set, A's rows are invisible and cannot
// be written; without a tenant nothing is visible.
func testRLSAtSQLLevel(t *testing.T, in *instance) {
	aID, a := in.tenant("rls-a", "tenant:manage")
	bID, _ := in.tenant("rls-b", "tenant:manage")
	s := a.do("POST", "/v1/mcp/servers", serverBody("rlswiki"))
	expect(t, "A creates a server", s, 201, "")
	sid := str(s.Body, "id")
	db := in.db()
	ctx := context.Background()
	asTenant := func(tenant string, fn func(tx pgx.Tx)) {
		t.Helper()
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SET LOCAL ROLE codelotse_tenant"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('app.tenant_id', $1, true)", tenant); err != nil {
			t.Fatal(err)
		}
		fn(tx)
	}
	count := func(tx pgx.Tx, q string, args ...any) int {
		t.Helper()
		var n int
		if err := tx.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	asTenant(aID, func(tx pgx.Tx) {
		if n := count(tx, "SELECT count(*) FROM mcp_servers WHERE id = $1", sid); n != 1 {
			t.Errorf("A sees %d of its servers, want 1", n)
		}
	})
	asTenant(bID, func(tx pgx.Tx) {
		if n := count(tx, "SELECT count(*) FROM mcp_servers WHERE id = $1", sid); n != 0 {
			t.Errorf("B sees A's server")
		}
		if n := count(tx, "SELECT count(*) FROM audit_events WHERE tenant_id = $1", aID); n != 0 {
			t.Errorf("B sees A's audit events")
		}
		tag, err := tx.Exec(ctx, "UPDATE mcp_servers SET enabled = false WHERE id = $1", sid)
		if err != nil || tag.RowsAffected() != 0 {
			t.Errorf("B's UPDATE of A's server: %v, %d rows", err, tag.RowsAffected())
		}
	})
	asTenant(bID, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, "INSERT INTO mcp_servers (tenant_id, name, url) VALUES ($1, 'planted', 'https://93.184.216.34/')", aID)
		if err == nil {
			t.Errorf("B inserted a server into A")
		}
	})
	asTenant("", func(tx pgx.Tx) {
		if n := count(tx, "SELECT count(*) FROM mcp_servers"); n != 0 {
			t.Errorf("without a tenant, %d servers are visible", n)
		}
	})
	if r := a.do("GET", "/v1/mcp/servers/"+sid, nil); r.Body["enabled"] != true {
		t.Errorf("A's server changed: %s", r.Raw)
	}
}

func testRepositories(t *testing.T, in *instance) {
	_, c := in.tenant("repositories", "tenant:manage")
	for _, v := range []string{"private", "internal", "public"} {
		r := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/" + v, "visibility": v})
		expect(t, "create "+v, r, 201, "")
		if str(r.Body, "name") != "acme/"+v || str(r.Body, "visibility") != v {
			t.Errorf("create %s = %s", v, r.Raw)
		}
		g := c.do("GET", "/v1/repositories/"+str(r.Body, "id"), nil)
		if !bytes.Equal(g.Raw, r.Raw) {
			t.Errorf("GET = %s, POST = %s", g.Raw, r.Raw)
		}
	}
	expect(t, "duplicate name", c.do("POST", "/v1/repositories", map[string]any{"name": "acme/private", "visibility": "public"}), 409, "name_taken")
	expectField(t, "unknown visibility", c.do("POST", "/v1/repositories", map[string]any{"name": "acme/x", "visibility": "secret"}), "visibility")
	expectField(t, "no visibility", c.do("POST", "/v1/repositories", map[string]any{"name": "acme/x"}), "visibility")
	expectField(t, "no name", c.do("POST", "/v1/repositories", map[string]any{"visibility": "private"}), "name")
	expectField(t, "blank name", c.do("POST", "/v1/repositories", map[string]any{"name": "   ", "visibility": "private"}), "name")
	expectField(t, "name over 200", c.do("POST", "/v1/repositories", map[string]any{"name": strings.Repeat("n", 201), "visibility": "private"}), "name")

	r := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/turning", "visibility": "private"})
	id := str(r.Body, "id")
	p := c.do("PATCH", "/v1/repositories/"+id, map[string]any{"visibility": "public"})
	expect(t, "PATCH visibility", p, 200, "")
	if str(p.Body, "visibility") != "public" || str(p.Body, "name") != "acme/turning" {
		t.Errorf("PATCH = %s", p.Raw)
	}
	if g := c.do("GET", "/v1/repositories/"+id, nil); str(g.Body, "visibility") != "public" {
		t.Errorf("GET after PATCH = %s", g.Raw)
	}
	expectField(t, "PATCH unknown visibility", c.do("PATCH", "/v1/repositories/"+id, map[string]any{"visibility": "secret"}), "visibility")
	expect(t, "PATCH unknown id", c.do("PATCH", "/v1/repositories/"+randomUUID(), map[string]any{"visibility": "public"}), 404, "not_found")
	expect(t, "GET unknown id", c.do("GET", "/v1/repositories/"+randomUUID(), nil), 404, "not_found")
}

func policyOf(t *testing.T, r response) (stored, effective map[string]any, active any) {
	t.Helper()
	stored, _ = r.Body["mcp"].(map[string]any)
	effective, _ = r.Body["effective"].(map[string]any)
	return stored, effective, r.Body["mcpActive"]
}

func testRepositoryPolicy(t *testing.T, in *instance) {
	_, c := in.tenant("policy", "tenant:manage,repo:manage")
	var servers []string
	for i := 0; i < 6; i++ {
		s := c.do("POST", "/v1/mcp/servers", serverBody(fmt.Sprintf("p%d", i)))
		expect(t, "create server", s, 201, "")
		servers = append(servers, str(s.Body, "id"))
	}
	repos := map[string]string{}
	for _, v := range []string{"private", "internal", "public"} {
		r := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/" + v, "visibility": v})
		expect(t, "create "+v, r, 201, "")
		repos[v] = "/v1/repositories/" + str(r.Body, "id") + "/policy"
	}

	// A repository without a stored policy inherits the tenant's (off) default.
	g := c.do("GET", repos["private"], nil)
	expect(t, "GET policy before PUT", g, 200, "")
	stored, eff, active := policyOf(t, g)
	if stored["mode"] != "inherit" || eff["mode"] != "off" || eff["source"] != "tenant" || eff["maxCalls"] != float64(5) || active != false {
		t.Errorf("policy before PUT = %s", g.Raw)
	}

	for _, v := range []string{"private", "internal"} {
		on := map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{servers[0]}, "maxCalls": 3}}
		p := c.do("PUT", repos[v], on)
		expect(t, "PUT mode on, "+v, p, 200, "")
		g := c.do("GET", repos[v], nil)
		if !bytes.Equal(p.Raw, g.Raw) {
			t.Errorf("%s: GET %s differs from PUT %s", v, g.Raw, p.Raw)
		}
		stored, eff, active := policyOf(t, g)
		if stored["mode"] != "on" || fmt.Sprint(stored["servers"]) != fmt.Sprint([]any{servers[0]}) || stored["maxCalls"] != float64(3) {
			t.Errorf("%s: stored = %v", v, stored)
		}
		if eff["mode"] != "on" || fmt.Sprint(eff["servers"]) != fmt.Sprint([]any{servers[0]}) || eff["maxCalls"] != float64(3) || eff["source"] != "repository" {
			t.Errorf("%s: effective = %v", v, eff)
		}
		if active != true {
			t.Errorf("%s: mcpActive = %v, want true", v, active)
		}
	}
	// maxCalls defaults to 5.
	p := c.do("PUT", repos["internal"], map[string]any{"mcp": map[string]any{"mode": "on", "servers": servers[:5]}})
	expect(t, "PUT five servers without maxCalls", p, 200, "")
	if stored, eff, _ := policyOf(t, p); stored["maxCalls"] != float64(5) || eff["maxCalls"] != float64(5) || len(eff["servers"].([]any)) != 5 {
		t.Errorf("default maxCalls: %s", p.Raw)
	}

	// A public repository cannot turn MCP on; off is fine.
	r := c.do("PUT", repos["public"], map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{servers[0]}}})
	expect(t, "mode on for a public repository", r, 422, "public_repository")
	r = c.do("PUT", repos["public"], map[string]any{"mcp": map[string]any{"mode": "off"}})
	expect(t, "mode off for a public repository", r, 200, "")
	if _, _, active := policyOf(t, r); active != false {
		t.Errorf("public repository: %s", r.Raw)
	}

	// A repository that turns public stops using MCP; its stored policy stays.
	privateID := strings.TrimSuffix(strings.TrimPrefix(repos["private"], "/v1/repositories/"), "/policy")
	expect(t, "PATCH to public", c.do("PATCH", "/v1/repositories/"+privateID, map[string]any{"visibility": "public"}), 200, "")
	g = c.do("GET", repos["private"], nil)
	if stored, _, active := policyOf(t, g); active != false || stored["mode"] != "on" {
		t.Errorf("policy after turning public = %s, want stored on and mcpActive false", g.Raw)
	}
	expect(t, "PATCH back to private", c.do("PATCH", "/v1/repositories/"+privateID, map[string]any{"visibility": "private"}), 200, "")
	if _, _, active := policyOf(t, c.do("GET", repos["private"], nil)); active != true {
		t.Errorf("policy after turning private again: mcpActive = %v", active)
	}

	// Field rules.
	for _, tt := range []struct {
		name  string
		mcp   map[string]any
		field string
	}{
		{"maxCalls 0", map[string]any{"mode": "on", "servers": []string{servers[0]}, "maxCalls": 0}, "mcp.maxCalls"},
		{"maxCalls 21", map[string]any{"mode": "on", "servers": []string{servers[0]}, "maxCalls": 21}, "mcp.maxCalls"},
		{"maxCalls -1", map[string]any{"mode": "off", "maxCalls": -1}, "mcp.maxCalls"},
		{"6 servers", map[string]any{"mode": "on", "servers": servers}, "mcp.servers"},
		{"unknown mode", map[string]any{"mode": "sometimes"}, "mcp.mode"},
		{"no mode", map[string]any{"servers": []string{servers[0]}}, "mcp.mode"},
	} {
		expectField(t, tt.name, c.do("PUT", repos["internal"], map[string]any{"mcp": tt.mcp}), tt.field)
	}
	for _, n := range []int{1, 20} {
		expect(t, fmt.Sprintf("maxCalls %d", n), c.do("PUT", repos["internal"],
			map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{servers[0]}, "maxCalls": n}}), 200, "")
	}
	// Mode on without servers is stored but not active.
	r = c.do("PUT", repos["internal"], map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{}}})
	if r.Status == 200 {
		if _, _, active := policyOf(t, r); active != false {
			t.Errorf("mode on without servers is active: %s", r.Raw)
		}
	}
	// Deleting a listed server: the policy no longer counts it (or the
	// server is simply gone from the effective list).
	expect(t, "unknown repository GET", c.do("GET", "/v1/repositories/"+randomUUID()+"/policy", nil), 404, "not_found")
	expect(t, "unknown repository PUT", c.do("PUT", "/v1/repositories/"+randomUUID()+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "off"}}), 404, "not_found")
}

// testPolicyAfterServerDelete: a policy whose only server was deleted
// lists no server any more, so it is not active ("at least one server").
func testPolicyAfterServerDelete(t *testing.T, in *instance) {
	_, c := in.tenant("policy-delete", "tenant:manage,repo:manage")
	s := c.do("POST", "/v1/mcp/servers", serverBody("gone"))
	expect(t, "create server", s, 201, "")
	sid := str(s.Body, "id")
	repo := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/orphan", "visibility": "private"})
	inherit := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/orphan-inherit", "visibility": "private"})
	path := "/v1/repositories/" + str(repo.Body, "id") + "/policy"
	inheritPath := "/v1/repositories/" + str(inherit.Body, "id") + "/policy"
	on := map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}}}
	expect(t, "policy on", c.do("PUT", path, on), 200, "")
	expect(t, "default on", c.do("PUT", "/v1/mcp/defaults", on), 200, "")
	for _, p := range []string{path, inheritPath} {
		if _, _, active := policyOf(t, c.do("GET", p, nil)); active != true {
			t.Fatalf("%s: not active before the delete", p)
		}
	}
	expect(t, "delete the server", c.do("DELETE", "/v1/mcp/servers/"+sid, nil), 204, "")
	for _, p := range []string{path, inheritPath} {
		g := c.do("GET", p, nil)
		expect(t, "GET policy after the delete", g, 200, "")
		_, eff, active := policyOf(t, g)
		if active != false || strings.Contains(fmt.Sprint(eff["servers"]), sid) {
			t.Errorf("%s after its only server was deleted = %s, want the server gone from effective and mcpActive false", p, g.Raw)
		}
	}
}

func testTenantDefaults(t *testing.T, in *instance) {
	_, c := in.tenant("defaults", "tenant:manage,repo:manage")
	s := c.do("POST", "/v1/mcp/servers", serverBody("dflt"))
	expect(t, "create server", s, 201, "")
	sid := str(s.Body, "id")

	d := c.do("GET", "/v1/mcp/defaults", nil)
	expect(t, "GET defaults", d, 200, "")
	if m := d.Body["mcp"].(map[string]any); m["mode"] != "off" || len(m["servers"].([]any)) != 0 || m["maxCalls"] != float64(5) {
		t.Errorf("initial defaults = %s, want off, no servers, maxCalls 5", d.Raw)
	}
	p := c.do("PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "off"}})
	expect(t, "PUT defaults off", p, 200, "")
	if m := p.Body["mcp"].(map[string]any); m["maxCalls"] != float64(5) {
		t.Errorf("default maxCalls = %v, want 5", m["maxCalls"])
	}
	p = c.do("PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}, "maxCalls": 7}})
	expect(t, "PUT defaults on", p, 200, "")
	if g := c.do("GET", "/v1/mcp/defaults", nil); !bytes.Equal(g.Raw, p.Raw) {
		t.Errorf("GET defaults %s differs from PUT %s", g.Raw, p.Raw)
	}
	expectField(t, "defaults maxCalls 21", c.do("PUT", "/v1/mcp/defaults",
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{sid}, "maxCalls": 21}}), "mcp.maxCalls")
	expectField(t, "defaults maxCalls 0", c.do("PUT", "/v1/mcp/defaults",
		map[string]any{"mcp": map[string]any{"mode": "off", "maxCalls": 0}}), "mcp.maxCalls")

	for _, v := range []string{"private", "public"} {
		r := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/inherit-" + v, "visibility": v})
		path := "/v1/repositories/" + str(r.Body, "id") + "/policy"
		// Without a stored policy and with an explicit inherit.
		for _, put := range []bool{false, true} {
			g := c.do("GET", path, nil)
			if put {
				g = c.do("PUT", path, map[string]any{"mcp": map[string]any{"mode": "inherit"}})
			}
			expect(t, fmt.Sprintf("%s policy (PUT inherit %t)", v, put), g, 200, "")
			stored, eff, active := policyOf(t, g)
			if stored["mode"] != "inherit" || eff["mode"] != "on" || eff["source"] != "tenant" || eff["maxCalls"] != float64(7) ||
				fmt.Sprint(eff["servers"]) != fmt.Sprint([]any{sid}) {
				t.Errorf("%s inherit (PUT %t) = %s, want the tenant's section", v, put, g.Raw)
			}
			if want := v == "private"; active != want {
				t.Errorf("%s inherit: mcpActive = %v, want %t", v, active, want)
			}
		}
		// The repository's own section wins.
		g := c.do("PUT", path, map[string]any{"mcp": map[string]any{"mode": "off"}})
		if _, eff, active := policyOf(t, g); eff["mode"] != "off" || eff["source"] != "repository" || active != false {
			t.Errorf("%s mode off = %s", v, g.Raw)
		}
	}
}

func testAudit(t *testing.T, in *instance) {
	tenantID, c := in.tenant("audit", "tenant:manage,repo:manage")
	const canary = "cnry-audit-Z8x6C4v2-aud1"
	in.secret(canary)
	var tokenID string
	if err := in.db().QueryRow(context.Background(), "SELECT id::text FROM api_tokens WHERE tenant_id = $1", tenantID).Scan(&tokenID); err != nil {
		t.Fatal(err)
	}
	repo := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/audited", "visibility": "private"})
	s1 := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "audited", "url": "https://93.184.216.34/mcp",
		"auth": map[string]any{"type": "bearer", "token": canary}, "acknowledged": true})
	expect(t, "create", s1, 201, "")
	expect(t, "update", c.do("PATCH", "/v1/mcp/servers/"+str(s1.Body, "id"), map[string]any{"enabled": false}), 200, "")
	s2 := c.do("POST", "/v1/mcp/servers", serverBody("doomed"))
	expect(t, "delete", c.do("DELETE", "/v1/mcp/servers/"+str(s2.Body, "id"), nil), 204, "")
	expect(t, "defaults", c.do("PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "off"}}), 200, "")
	expect(t, "policy", c.do("PUT", "/v1/repositories/"+str(repo.Body, "id")+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{str(s1.Body, "id")}}}), 200, "")
	// Refused changes leave no event.
	expect(t, "refused create", c.do("POST", "/v1/mcp/servers", serverBody("audited")), 409, "name_taken")

	want := []struct{ action, target string }{
		{"policy.update", str(repo.Body, "id")},
		{"policy.defaults", ""},
		{"server.delete", str(s2.Body, "id")},
		{"server.create", str(s2.Body, "id")},
		{"server.update", str(s1.Body, "id")},
		{"server.create", str(s1.Body, "id")},
		{"repository.create", str(repo.Body, "id")},
		{"token.create", tokenID}, // the operator's `tokens create`
	}
	r := c.do("GET", "/v1/audit", nil)
	expect(t, "GET /v1/audit", r, 200, "")
	expectNoEcho(t, "audit", r, canary, "cnry-audit", c.token)
	events, _ := r.Body["events"].([]any)
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d: %s", len(events), len(want), r.Raw)
	}
	var last time.Time
	for i, e := range events {
		ev := e.(map[string]any)
		if ev["action"] != want[i].action || (want[i].target != "" && ev["target"] != want[i].target) {
			t.Errorf("event %d = %v %v, want %s %s", i, ev["action"], ev["target"], want[i].action, want[i].target)
		}
		if want[i].action == "token.create" {
			if ev["actor"] != "operator" {
				t.Errorf("event %d: actor %v, want operator", i, ev["actor"])
			}
			continue
		}
		if ev["actor"] != "token:"+tokenID {
			t.Errorf("event %d: actor %v, want token:%s", i, ev["actor"], tokenID)
		}
		at := parseTime(t, str(ev, "at"))
		if i > 0 && at.After(last) {
			t.Errorf("event %d is newer than event %d: not newest first", i, i-1)
		}
		last = at
	}

	// limit is honoured.
	r2 := c.do("GET", "/v1/audit?limit=2", nil)
	expect(t, "limit=2", r2, 200, "")
	if got := r2.Body["events"].([]any); len(got) != 2 || fmt.Sprint(got) != fmt.Sprint(events[:2]) {
		t.Errorf("limit=2 = %s, want the 2 newest events", r2.Raw)
	}
	expect(t, "limit=200", c.do("GET", "/v1/audit?limit=200", nil), 200, "")
	for _, bad := range []string{"0", "-1", "201", "abc", "", "1.5", "99999999999999999999"} {
		expectField(t, "limit="+bad, c.do("GET", "/v1/audit?limit="+bad, nil), "limit")
	}
}

var uuidLine = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$`)

// runRaw runs a codelotse command with the instance's environment and
// returns its untrimmed output.
func (in *instance) runRaw(args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = in.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// errorLines returns the lines of stderr that are not JSON log lines.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "{") {
			out = append(out, l)
		}
	}
	return out
}

func testCLITenantsAndTokens(t *testing.T, in *instance) {
	out, stderr, err := in.runRaw("tenants", "create", "--name", "CLI tenant")
	if err != nil {
		t.Fatalf("tenants create: %v: %s", err, stderr)
	}
	if !uuidLine.MatchString(out) {
		t.Errorf("tenants create printed %q, want a UUID alone on one line", out)
	}
	tenantID := strings.TrimSpace(out)

	for _, tt := range []struct {
		name string
		args []string
	}{
		{"bad permission", []string{"tokens", "create", "--tenant", tenantID, "--permissions", "tenant:manage,admin"}},
		{"no permission", []string{"tokens", "create", "--tenant", tenantID}},
		{"unknown tenant", []string{"tokens", "create", "--tenant", randomUUID(), "--permissions", "repo:manage"}},
		{"malformed tenant", []string{"tokens", "create", "--tenant", "acme", "--permissions", "repo:manage"}},
		{"blank tenant name", []string{"tenants", "create", "--name", "  "}},
	} {
		out, stderr, err := in.runRaw(tt.args...)
		if err == nil {
			t.Errorf("%s: exit 0, want a failure", tt.name)
		}
		if out != "" {
			t.Errorf("%s: printed %q on stdout", tt.name, out)
		}
		lines := errorLines(stderr)
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "codelotse: ") {
			t.Errorf("%s: stderr %q, want one line starting with \"codelotse: \"", tt.name, stderr)
		}
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%s: stack trace on stderr: %s", tt.name, stderr)
		}
	}

	out, stderr, err = in.runRaw("tokens", "create", "--tenant", tenantID, "--permissions", "tenant:manage,repo:manage")
	if err != nil {
		t.Fatalf("tokens create: %v: %s", err, stderr)
	}
	token := strings.TrimSuffix(out, "\n")
	in.secret(token)
	if token == "" || strings.ContainsAny(token, " \t\n") || out != token+"\n" {
		t.Errorf("tokens create printed %q, want the token alone on one line", out)
	}
	if strings.Contains(stderr, token) {
		t.Errorf("tokens create repeated the token on stderr")
	}
	c := &client{in: in, token: token}
	expect(t, "the new token works", c.do("GET", "/v1/mcp/status", nil), 200, "")

	// Only a hash is stored: no row of api_tokens holds the token or its
	// random part, in text or hex.
	var rows string
	if err := in.db().QueryRow(context.Background(),
		"SELECT coalesce(string_agg(row_to_json(t)::text, E'\n'), '') FROM api_tokens t").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	random := strings.TrimPrefix(token, "clt_")
	for _, v := range []string{token, random, fmt.Sprintf("%x", token), fmt.Sprintf("%x", random)} {
		if strings.Contains(rows, v) {
			t.Errorf("api_tokens holds the plaintext token (%q)", v)
		}
	}
	if !strings.Contains(rows, tenantID) {
		t.Errorf("api_tokens has no row of the tenant: the check above read nothing")
	}
}
