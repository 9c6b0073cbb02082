package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports/portfake"
	"github.com/rs/zerolog"
)

// tokenAPI serves the token routes with the real authenticator (and its
// limiter) on in-memory accounts; it returns a tenant:manage token.
func tokenAPI(t *testing.T) (http.Handler, string, *bytes.Buffer, *portfake.Clock) {
	t.Helper()
	return tokenAPIBehind(t, netpolicy.TrustedProxies{})
}

// tokenAPIBehind is tokenAPI trusting proxies' X-Forwarded-For.
func tokenAPIBehind(t *testing.T, proxies netpolicy.TrustedProxies) (http.Handler, string, *bytes.Buffer, *portfake.Clock) {
	t.Helper()
	store := portfake.NewAccounts()
	clock := &portfake.Clock{At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	store.Now = clock.Now
	d := accounts.Deps{Accounts: store, Tenants: &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{} }},
		Clock: clock, Rand: rand.Reader, Limiter: accounts.NewAuthLimiter(clock)}
	tenant, _ := accounts.NewCreateTenantHandler(d).Handle(context.Background(), accounts.CreateTenant{Name: "acme"})
	admin, err := accounts.NewCreateTokenHandler(d).Handle(context.Background(), accounts.CreateToken{TenantID: tenant, Permissions: []string{app.PermTenantManage}})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	routes := NewTokenRoutes(accounts.NewCreateTokenHandler(d), accounts.NewListTokensHandler(d), accounts.NewRevokeTokenHandler(d))
	srv := NewServer("127.0.0.1:0", zerolog.New(&logs), okReady{}, accounts.NewAuthenticateHandler(d), app.Gates{}, proxies, []Routes{routes}, nil)
	return srv.Handler(), admin, &logs, clock
}

func callAs(h http.Handler, client, token, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = client + ":50000"
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestTokenRoutes(t *testing.T) {
	h, admin, _, _ := tokenAPI(t)
	rec := callAs(h, "192.0.2.1", admin, "POST", "/v1/tokens", `{"label": "ci", "permissions": ["repo:manage"], "expiresIn": "30d"}`)
	var created map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	tok, _ := created["token"].(string)
	if !strings.HasPrefix(tok, accounts.TokenPrefix) || created["label"] != "ci" || created["expiresAt"] != "2026-12-31T12:00:00Z" || created["lastUsedAt"] != nil {
		t.Errorf("created %v", created)
	}
	rec = callAs(h, "192.0.2.1", admin, "GET", "/v1/tokens", "")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), tok) || strings.Count(rec.Body.String(), `"id"`) != 2 {
		t.Fatalf("GET = %d %s", rec.Code, rec.Body)
	}
	// The new token works, is repo:manage only, and fails at once once revoked.
	if rec = callAs(h, "192.0.2.2", tok, "GET", "/v1/tokens", ""); rec.Code != http.StatusForbidden {
		t.Errorf("repo:manage token on /v1/tokens = %d", rec.Code)
	}
	id, _ := created["id"].(string)
	if rec = callAs(h, "192.0.2.1", admin, "DELETE", "/v1/tokens/"+id, ""); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE = %d %s", rec.Code, rec.Body)
	}
	if rec = callAs(h, "192.0.2.2", tok, "GET", "/v1/tokens", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("revoked token = %d", rec.Code)
	}
	// expiresIn as whole seconds (OAuth's expires_in) or null.
	rec = callAs(h, "192.0.2.1", admin, "POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": 3600}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"expiresAt":"2026-12-01T13:00:00Z"`) {
		t.Errorf("expiresIn 3600 = %d %s", rec.Code, rec.Body)
	}
	rec = callAs(h, "192.0.2.1", admin, "POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": null}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"expiresAt":null`) {
		t.Errorf("expiresIn null = %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct{ method, path, body, code string }{
		{"DELETE", "/v1/tokens/" + id, "", "not_found"},
		{"DELETE", "/v1/tokens/nope", "", "not_found"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": "soon"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["admin"]}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "label": "a\u0000b"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "token": "mine"}`, "bad_json"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": 0}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": "0d"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": "0h"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": "0m"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": "-1d"}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": -60}`, "validation_failed"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": 1.5}`, "bad_json"},
		{"POST", "/v1/tokens", `{"permissions": ["repo:manage"], "expiresIn": true}`, "bad_json"},
	} {
		rec = callAs(h, "192.0.2.1", admin, tc.method, tc.path, tc.body)
		if !strings.Contains(rec.Body.String(), `"code":"`+tc.code+`"`) {
			t.Errorf("%s %s %s = %d %s, want %s", tc.method, tc.path, tc.body, rec.Code, rec.Body, tc.code)
		}
	}
}

// TestBearerAuthenticationRateLimited: failed bearer authentications
// from one address past the limit answer 429 rate_limited with
// Retry-After and are logged with the client address (never the token);
// a correct token is never refused because of failures, from that
// client or another.
func TestBearerAuthenticationRateLimited(t *testing.T) {
	h, admin, logs, clock := tokenAPI(t)
	for i := range accounts.MaxAuthFailuresPerClient {
		if rec := callAs(h, "198.51.100.7", "clt_wrong-"+string(rune('a'+i%26)), "GET", "/v1/tokens", ""); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d = %d", i+1, rec.Code)
		}
	}
	rec := callAs(h, "198.51.100.7", "clt_wrong", "GET", "/v1/tokens", "")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"code":"rate_limited"`) {
		t.Fatalf("past the limit = %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec = callAs(h, "198.51.100.7", admin, "GET", "/v1/tokens", ""); rec.Code != http.StatusOK {
		t.Errorf("the correct token from the limited client = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec = callAs(h, "198.51.100.8", admin, "GET", "/v1/tokens", ""); rec.Code != http.StatusOK {
		t.Errorf("another client with the correct token = %d", rec.Code)
	}
	// Another client's failures are its own: not limited by the first's.
	if rec = callAs(h, "198.51.100.8", "clt_other", "GET", "/v1/tokens", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("another client's wrong token = %d, want 401", rec.Code)
	}
	if !strings.Contains(logs.String(), `"client":"198.51.100.7"`) || !strings.Contains(logs.String(), `"message":"authentication failed"`) ||
		strings.Contains(logs.String(), "clt_wrong") || strings.Contains(logs.String(), admin) {
		t.Errorf("log:\n%s", logs)
	}
	clock.At = clock.At.Add(accounts.AuthFailureWindow)
	if rec = callAs(h, "198.51.100.7", admin, "GET", "/v1/tokens", ""); rec.Code != http.StatusOK {
		t.Errorf("after the window = %d", rec.Code)
	}
}

// forwardedAs is callAs over a connection from peer with X-Forwarded-For
// xff.
func forwardedAs(h http.Handler, peer, xff, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/v1/tokens", nil)
	req.RemoteAddr = peer
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestClientAddressBehindTrustedProxies: the limit on failed
// authentications counts the client that QUAVON_TRUSTED_PROXIES makes
// of a request. A forged X-Forwarded-For from a peer outside the list
// changes nothing (its failures are the peer's, whatever it claims); a
// trusted proxy's X-Forwarded-For names the client, through a chain of
// proxies and in IPv6; and the client that one proxy's header locked
// out still gets in with its correct token.
func TestClientAddressBehindTrustedProxies(t *testing.T) {
	proxies, err := netpolicy.ParseTrustedProxies("10.0.0.0/8, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	fail := func(t *testing.T, h http.Handler, peer, xff func(i int) string, n int) {
		t.Helper()
		for i := range n {
			// Tokens that start differently: only the per-client limit.
			if rec := forwardedAs(h, peer(i), xff(i), fmt.Sprintf("clt_%08d", i)); rec.Code != http.StatusUnauthorized {
				t.Fatalf("failure %d = %d", i+1, rec.Code)
			}
		}
	}
	same := func(s string) func(int) string { return func(int) string { return s } }
	vary := func(format string) func(int) string { return func(i int) string { return fmt.Sprintf(format, i) } }
	limited := func(t *testing.T, h http.Handler, what, peer, xff string, want bool, logs *bytes.Buffer, client string) {
		t.Helper()
		rec := forwardedAs(h, peer, xff, "clt_probe")
		if got := rec.Code == http.StatusTooManyRequests; got != want {
			t.Errorf("%s: a wrong token = %d, want limited %v", what, rec.Code, want)
		}
		if client != "" && !strings.Contains(logs.String(), `"client":"`+client+`"`) {
			t.Errorf("%s: the log names no client %s:\n%s", what, client, logs)
		}
	}

	t.Run("a forged X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		h, admin, logs, _ := tokenAPIBehind(t, proxies)
		// Every failure claims another client: all are the peer's.
		fail(t, h, same("198.51.100.7:5000"), vary("203.0.113.%d"), accounts.MaxAuthFailuresPerClient)
		limited(t, h, "the untrusted peer, claiming yet another client", "198.51.100.7:5000", "192.0.2.99", true, logs, "198.51.100.7")
		if strings.Contains(logs.String(), "203.0.113.") {
			t.Errorf("a forged address reached the log:\n%s", logs)
		}
		// Nor can it push its failures onto the address it names.
		limited(t, h, "the address the forger named", "10.0.0.1:5000", "203.0.113.1", false, logs, "")
		if rec := forwardedAs(h, "198.51.100.7:5000", "", admin); rec.Code != http.StatusOK {
			t.Errorf("the correct token from the limited peer = %d", rec.Code)
		}
	})

	t.Run("a trusted proxy's X-Forwarded-For names the client", func(t *testing.T) {
		h, admin, logs, _ := tokenAPIBehind(t, proxies)
		fail(t, h, same("10.1.2.3:5000"), same("198.51.100.7"), accounts.MaxAuthFailuresPerClient)
		limited(t, h, "the forwarded client", "10.9.9.9:5000", "198.51.100.7", true, logs, "198.51.100.7")
		limited(t, h, "another client behind the same proxy", "10.1.2.3:5000", "198.51.100.8", false, logs, "")
		limited(t, h, "the proxy itself", "10.1.2.3:5000", "", false, logs, "")
		if rec := forwardedAs(h, "10.1.2.3:5000", "198.51.100.7", admin); rec.Code != http.StatusOK {
			t.Errorf("the locked-out client's correct token = %d %s, want 200", rec.Code, rec.Body)
		}
	})

	t.Run("a chain of proxies: the first untrusted address from the right", func(t *testing.T) {
		h, _, logs, _ := tokenAPIBehind(t, proxies)
		// The client forges entries left of its own; two proxies append.
		fail(t, h, same("10.0.0.2:5000"), vary("192.0.2.%d, 198.51.100.7, 10.0.0.1"), accounts.MaxAuthFailuresPerClient)
		limited(t, h, "the client in the chain", "10.0.0.2:5000", "198.51.100.7, 10.0.0.1", true, logs, "198.51.100.7")
		limited(t, h, "an address the client forged", "10.0.0.2:5000", "192.0.2.1", false, logs, "")
	})

	t.Run("IPv6 clients and proxies", func(t *testing.T) {
		h, admin, logs, _ := tokenAPIBehind(t, proxies)
		fail(t, h, same("[fd00::1]:443"), vary("2001:db8:1:2::%x, fd00::2"), accounts.MaxAuthFailuresPerClient)
		limited(t, h, "the client's /64", "[fd00::3]:443", "2001:db8:1:2::ffff", true, logs, "2001:db8:1:2::")
		limited(t, h, "another /64", "[fd00::3]:443", "2001:db8:1:3::1", false, logs, "")
		if rec := forwardedAs(h, "[fd00::3]:443", "2001:db8:1:2::ffff", admin); rec.Code != http.StatusOK {
			t.Errorf("the correct token from the limited /64 = %d", rec.Code)
		}
	})
}
