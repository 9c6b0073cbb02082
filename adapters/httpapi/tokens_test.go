package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports/portfake"
	"github.com/rs/zerolog"
)

// tokenAPI serves the token routes with the real authenticator (and its
// limiter) on in-memory accounts; it returns a tenant:manage token.
func tokenAPI(t *testing.T) (http.Handler, string, *bytes.Buffer, *portfake.Clock) {
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
	srv := NewServer("127.0.0.1:0", zerolog.New(&logs), okReady{}, accounts.NewAuthenticateHandler(d), app.Gates{}, []Routes{routes}, nil)
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
// the correct token still works for another client meanwhile.
func TestBearerAuthenticationRateLimited(t *testing.T) {
	h, admin, logs, clock := tokenAPI(t)
	for i := range accounts.MaxAuthFailuresPerClient {
		if rec := callAs(h, "198.51.100.7", "clt_wrong-"+string(rune('a'+i%26)), "GET", "/v1/tokens", ""); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d = %d", i+1, rec.Code)
		}
	}
	rec := callAs(h, "198.51.100.7", admin, "GET", "/v1/tokens", "")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"code":"rate_limited"`) {
		t.Fatalf("past the limit = %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec = callAs(h, "198.51.100.8", admin, "GET", "/v1/tokens", ""); rec.Code != http.StatusOK {
		t.Errorf("another client with the correct token = %d", rec.Code)
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
