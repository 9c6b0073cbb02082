//go:build signedoff

package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestE2EDatabaseOutage: with the database cut off for five seconds
// under about 20 requests a second, every API request and every web page
// is 503 unavailable with Retry-After (never 500), the process stays up,
// and it serves again as soon as the database is back.
func TestE2EDatabaseOutage(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	in := startInstanceOn(t, dsn)
	_, c := in.tenant("acme", "tenant:manage")
	web := newWebSession(t, in.base, c.token)
	expect(t, "before the outage", c.do("GET", "/v1/mcp/servers", nil), 200, "")

	proxy.Cut()
	statuses := map[int]int{}
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(40 * time.Millisecond) {
		r := c.do("GET", "/v1/mcp/servers", nil)
		statuses[r.Status]++
		if r.Status != http.StatusServiceUnavailable || r.code() != "unavailable" || r.Header.Get("Retry-After") != "5" {
			t.Fatalf("GET /v1/mcp/servers during the outage = %d %q, Retry-After %q: %s\n%s", r.Status, r.code(), r.Header.Get("Retry-After"), r.Raw, in.logs.String()[max(0, len(in.logs.String())-3000):])
		}
		status, _, body := web.do("GET", "/ui/repositories", nil)
		statuses[status]++
		if status != http.StatusServiceUnavailable {
			t.Fatalf("GET /ui/repositories during the outage = %d: %.300s", status, body)
		}
	}

	proxy.Mend(t)
	back := time.Now()
	for r := c.do("GET", "/v1/mcp/servers", nil); r.Status != 200; r = c.do("GET", "/v1/mcp/servers", nil) {
		if time.Since(back) > 10*time.Second {
			t.Fatalf("10 s after the database is back: %d %s", r.Status, r.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, _, body := web.do("GET", "/ui/repositories", nil); status != 200 {
		t.Errorf("the web page after the outage = %d: %.300s", status, body)
	}
	t.Logf("during the outage: %v; serving again %v after the database was back", statuses, time.Since(back))
}
