package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestPagesAnswerAnOutageUnavailable: while the database cannot be
// reached, a page is 503 with Retry-After and says so in words, never
// the internal-error page; the same session works once it is back.
func TestPagesAnswerAnOutageUnavailable(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	db, closeDB, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeDB)
	h := newHarnessOn(t, db, openGates)
	b, _ := h.signIn("tenant:manage")
	if p := b.get("/ui/repositories"); p.status != http.StatusOK {
		t.Fatalf("before the outage: %d", p.status)
	}

	proxy.Cut()
	for _, path := range []string{"/ui/repositories", "/ui/servers", "/ui/"} {
		p := b.get(path)
		if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "5" || !strings.Contains(p.body, "cannot reach its database") {
			t.Errorf("GET %s during the outage = %d, Retry-After %q: %.300s", path, p.status, p.header.Get("Retry-After"), p.body)
		}
	}

	proxy.Mend(t)
	if p := b.get("/ui/repositories"); p.status != http.StatusOK {
		t.Errorf("after the outage: %d", p.status)
	}
}
