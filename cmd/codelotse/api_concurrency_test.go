//go:build signedoff

package main

import (
	"fmt"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

// writers is how many requests each round sends at once (docs/input.md, Concurrent writes).
const writers = 50

// race sends n requests at once (body(i) for the i-th) and returns their
// answers; each is validated against openapi.yaml by client.do.
func race(c *client, n int, method string, path func(i int) string, body func(i int) any) []response {
	out := make([]response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			<-start
			var b any
			if body != nil {
				b = body(i)
			}
			out[i] = c.do(method, path(i), b)
		})
	}
	close(start)
	wg.Wait()
	return out
}

func same(p string) func(int) string { return func(int) string { return p } }

// tally counts the answers by "status code" ("200", "409 name_taken").
func tally(rs []response) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		k := fmt.Sprint(r.Status)
		if c := r.code(); c != "" {
			k += " " + c
		}
		m[k]++
	}
	return m
}

func fmtTally(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// expectTally fails t on any 5xx and unless the answers are exactly want
// (nil: only statuses below 500 are checked, for rounds whose split is
// timing's).
func expectTally(t *testing.T, what string, rs []response, want map[string]int, allowed ...string) {
	t.Helper()
	got := tally(rs)
	for _, r := range rs {
		if r.Status >= 500 {
			t.Errorf("%s: %d concurrent requests answered %s; a 5xx among them: %s", what, len(rs), fmtTally(got), r.Raw)
			return
		}
	}
	if want != nil && fmtTally(got) != fmtTally(want) {
		t.Errorf("%s: answers %s, want %s", what, fmtTally(got), fmtTally(want))
	}
	if len(allowed) > 0 {
		for k := range got {
			if !contains(allowed, k) {
				t.Errorf("%s: answers %s, only %v expected", what, fmtTally(got), allowed)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestConcurrentWritersOnEveryWriteRoute sends 50 concurrent requests to
// each write route of the API, on one resource of one tenant: every
// request answers its normal status (docs/input.md: concurrent
// writes of one resource are serialised), never a 5xx — PUT
// /v1/tenant/settings answered 500 "deadlock detected" for most of them
// before its read took the row lock of a change.
func TestConcurrentWritersOnEveryWriteRoute(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t)
	in := startCommandOn(t, "api", pgtest.DSN(t), env...)
	in.secret(key)
	t.Cleanup(func() { in.checkLogsHoldNoSecrets(t) })
	p := startMCP(t, era2026, func(p *mcpPeer) { p.addTool("search", "Searches.", searchSchema(), readOnly(), "ok") })

	_, c := in.tenant("concurrency", "tenant:manage,repo:manage")

	t.Run("PUT /v1/tenant/settings", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PUT", same("/v1/tenant/settings"), func(i int) any {
			// Half turn the prompt logs on, half off (which deletes them).
			return map[string]any{"retentionDays": i + 1, "debugPrompts": map[string]any{"enabled": i%2 == 0, "ttlHours": 24}}
		})
		expectTally(t, "PUT settings", rs, map[string]int{"200": writers})
		audit := auditEvents(t, c, 200)
		n := 0
		for _, e := range audit {
			if e["action"] == "tenant.settings" {
				n++
			}
		}
		if n != writers {
			t.Errorf("%d tenant.settings audit events, want %d", n, writers)
		}
	})

	t.Run("POST /v1/mcp/servers", func(t *testing.T) {
		_, c := in.tenant("concurrency-create", "tenant:manage")
		c = c.on(t)
		rs := race(c, writers, "POST", same("/v1/mcp/servers"), func(i int) any { return serverBody(fmt.Sprintf("s%02d", i)) })
		expectTally(t, "create distinct servers", rs, map[string]int{"201": 20, "409 too_many_servers": writers - 20})
		_, c2 := in.tenant("concurrency-same-name", "tenant:manage")
		c2 = c2.on(t)
		rs = race(c2, writers, "POST", same("/v1/mcp/servers"), func(int) any { return serverBody("wiki") })
		expectTally(t, "create one name", rs, map[string]int{"201": 1, "409 name_taken": writers - 1})
	})

	wiki := registerServer(t, c, "wiki", p.url(), "")
	serverPath := "/v1/mcp/servers/" + wiki

	t.Run("PATCH /v1/mcp/servers/{id}", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PATCH", same(serverPath), func(i int) any { return map[string]any{"enabled": i%2 == 0} })
		expectTally(t, "enable and disable", rs, map[string]int{"200": writers})
		rs = race(c, writers, "PATCH", same(serverPath), func(i int) any { return map[string]any{"name": fmt.Sprintf("wiki%02d", i%5)} })
		expectTally(t, "rename", rs, map[string]int{"200": writers})
		expect(t, "rename back", c.do("PATCH", serverPath, map[string]any{"name": "wiki", "enabled": true}), 200, "")
	})

	t.Run("POST /v1/mcp/servers/{id}/discover", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "POST", same(serverPath+"/discover"), nil)
		expectTally(t, "discover", rs, map[string]int{"200": 1, "409 discovery_throttled": writers - 1})
	})

	t.Run("PUT /v1/mcp/servers/{id}/tools", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PUT", same(serverPath+"/tools"), func(i int) any {
			return map[string]any{"tools": []any{map[string]any{"name": "search", "description": fmt.Sprintf("Searches (%d).", i)}}}
		})
		expectTally(t, "save the allowlist", rs, nil, "200", "409 discovery_throttled")
	})

	var repoID string
	t.Run("POST /v1/repositories", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "POST", same("/v1/repositories"), func(int) any { return map[string]any{"name": "acme/api", "visibility": "private"} })
		expectTally(t, "create one name", rs, map[string]int{"201": 1, "409 name_taken": writers - 1})
		for _, r := range rs {
			if r.Status == 201 {
				repoID = str(r.Body, "id")
			}
		}
		rs = race(c, writers, "POST", same("/v1/repositories"), func(i int) any {
			return map[string]any{"name": fmt.Sprintf("acme/r%02d", i), "visibility": "private"}
		})
		expectTally(t, "create distinct names", rs, map[string]int{"201": writers})
	})
	if repoID == "" {
		t.Fatal("no repository")
	}
	repoPath := "/v1/repositories/" + repoID

	t.Run("PATCH /v1/repositories/{id}", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PATCH", same(repoPath), func(i int) any {
			return map[string]any{"visibility": []string{"private", "internal"}[i%2]}
		})
		expectTally(t, "change visibility", rs, map[string]int{"200": writers})
	})

	t.Run("PUT /v1/mcp/defaults", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PUT", same("/v1/mcp/defaults"), func(i int) any {
			return map[string]any{"mcp": map[string]any{"mode": []string{"on", "off"}[i%2], "servers": []string{wiki}, "maxCalls": i%20 + 1}}
		})
		expectTally(t, "put defaults", rs, map[string]int{"200": writers})
	})

	t.Run("PUT /v1/repositories/{id}/policy", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "PUT", same(repoPath+"/policy"), func(i int) any {
			return map[string]any{"mcp": map[string]any{"mode": []string{"on", "off", "inherit"}[i%3], "servers": []string{wiki}, "maxCalls": i%20 + 1}}
		})
		expectTally(t, "put policy", rs, map[string]int{"200": writers})
	})

	t.Run("POST /v1/repositories/{id}/reviews", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "POST", same(repoPath+"/reviews"), func(i int) any {
			return map[string]any{"title": fmt.Sprintf("r%d", i), "description": "", "diff": "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-a\n+b\n", "files": map[string]string{"a.go": "b"}}
		})
		expectTally(t, "submit reviews", rs, map[string]int{"202": writers})
	})

	t.Run("mixed writers on one tenant", func(t *testing.T) {
		c := c.on(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var all []response
		add := func(rs []response) { mu.Lock(); all = append(all, rs...); mu.Unlock() }
		wg.Go(func() {
			add(race(c, writers/5, "PUT", same("/v1/tenant/settings"), func(i int) any { return map[string]any{"retentionDays": i + 1} }))
		})
		wg.Go(func() {
			add(race(c, writers/5, "PUT", same(repoPath+"/policy"), func(int) any {
				return map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{wiki}}}
			}))
		})
		wg.Go(func() {
			add(race(c, writers/5, "PATCH", same(serverPath), func(i int) any { return map[string]any{"enabled": i%2 == 0} }))
		})
		wg.Go(func() {
			add(race(c, writers/5, "PUT", same("/v1/mcp/defaults"), func(int) any { return map[string]any{"mcp": map[string]any{"mode": "off"}} }))
		})
		wg.Go(func() {
			add(race(c, writers/5, "POST", same(repoPath+"/reviews"), func(int) any { return map[string]any{"title": "t", "diff": "x"} }))
		})
		wg.Wait()
		expectTally(t, "mixed", all, nil, "200", "202")
	})

	t.Run("POST and DELETE /v1/tokens", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "POST", same("/v1/tokens"), func(i int) any {
			return map[string]any{"label": fmt.Sprintf("t%02d", i), "permissions": []string{"repo:manage"}, "expiresIn": "1h"}
		})
		expectTally(t, "create tokens", rs, map[string]int{"201": writers})
		for _, r := range rs {
			if tok, _ := r.Body["token"].(string); tok != "" {
				in.secret(tok)
			}
		}
		id := str(rs[0].Body, "id")
		rs = race(c, writers, "DELETE", same("/v1/tokens/"+id), nil)
		expectTally(t, "revoke one token", rs, map[string]int{"204": 1, "404 not_found": writers - 1})
	})

	t.Run("DELETE /v1/mcp/servers/{id}", func(t *testing.T) {
		c := c.on(t)
		rs := race(c, writers, "DELETE", same(serverPath), nil)
		expectTally(t, "delete", rs, map[string]int{"204": 1, "404 not_found": writers - 1})
		if r := c.do("GET", serverPath, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET after the deletes = %d", r.Status)
		}
	})
}
