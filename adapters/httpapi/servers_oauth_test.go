package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
)

const srvClientSecret = "cs-SUPERSECRET-client-9876"

func TestServerRoutesOAuth(t *testing.T) {
	store := newSrvStore()
	ts := newServerAPI(t, store, srvOpenGates)
	status, raw := srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", `{"name": "wiki", "url": "https://wiki.example.com/mcp", "acknowledged": true,
		"auth": {"type": "oauth_client_credentials", "tokenUrl": "https://docs.example.com/token", "clientId": "client-1", "clientSecret": "`+srvClientSecret+`", "scopes": ["mcp:read"]}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST = %d %s", status, raw)
	}
	var v ServerView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Auth.Type != "oauth_client_credentials" || v.Auth.ClientID == nil || *v.Auth.ClientID != "client-1" ||
		v.Auth.Scopes == nil || !slices.Equal(*v.Auth.Scopes, []string{"mcp:read"}) || v.Auth.Hint != "client_secret …9876" || v.Auth.Connection != nil {
		t.Errorf("auth view %s", raw)
	}
	if strings.Contains(string(raw), "SUPERSECRET") {
		t.Errorf("view holds the secret: %s", raw)
	}

	status, raw = srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", `{"name": "docs", "url": "https://docs.example.com/mcp", "acknowledged": true,
		"auth": {"type": "oauth_authorization_code", "clientId": "pub", "scopes": []}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST = %d %s", status, raw)
	}
	auth := srvJSON(t, raw)["auth"].(map[string]any)
	conn, _ := auth["connection"].(map[string]any)
	if scopes, ok := auth["scopes"].([]any); !ok || len(scopes) != 0 {
		t.Errorf("scopes = %v, want []", auth["scopes"])
	}
	if auth["clientId"] != "pub" || conn == nil || conn["state"] != "needs_connection" || conn["by"] != nil || conn["at"] != nil {
		t.Errorf("code-flow auth view %v", auth)
	}
	if _, ok := conn["by"]; !ok {
		t.Errorf("connection.by missing, want null: %v", conn)
	}
	for _, ev := range store.events {
		if strings.Contains(string(must(json.Marshal(ev.Details))), "SUPERSECRET") {
			t.Errorf("audit %v holds the secret", ev.Details)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestServerAuthViewConnected(t *testing.T) {
	at := time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)
	c, _ := server.NewOAuthAuthorizationCode("pub", "", "", []string{"a"}, "")
	u, _ := server.ParseURL("https://as.example.com/token")
	c, err := c.WithConnection("https://as.example.com", u, "refresh-SUPERSECRET", "token:t1", at)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := server.ParseName("wiki")
	su, _ := server.ParseURL("https://wiki.example.com/mcp")
	s, err := server.NewServer("00000001-3333-4333-8333-333333333333", srvTenantA, name, su, c, true, at)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(NewServerView(s, testFindings, server.AllowedURLs{}))
	auth := srvJSON(t, raw)["auth"].(map[string]any)
	conn := auth["connection"].(map[string]any)
	if conn["state"] != "connected" || conn["by"] != "token:t1" || conn["at"] != "2026-03-02T08:30:00Z" || strings.Contains(string(raw), "SUPERSECRET") {
		t.Errorf("connected view %s", raw)
	}
	if auth["issuer"] != "https://as.example.com" || conn["refused"] != nil {
		t.Errorf("issuer and refusal in %s", raw)
	}
	// A Connect refused because the MCP server named another
	// authorization server: the view says why.
	s.RefuseConnection(server.RefusedIssuerMismatch)
	raw, _ = json.Marshal(NewServerView(s, testFindings, server.AllowedURLs{}))
	v := srvJSON(t, raw)
	if conn := v["auth"].(map[string]any)["connection"].(map[string]any); conn["refused"] != "issuer_mismatch" || v["lastError"] != "server_unauthorized" || v["status"] != "unauthorized" {
		t.Errorf("refused view %s", raw)
	}
}

func TestServerRoutesOAuthRefusals(t *testing.T) {
	ts := newServerAPI(t, newSrvStore(), srvOpenGates)
	body := func(auth string) string {
		return `{"name": "wiki", "url": "https://wiki.example.com/mcp", "acknowledged": true, "auth": ` + auth + `}`
	}
	tests := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"unknown auth field", body(`{"type": "oauth_authorization_code", "clientId": "c", "refreshToken": "r"}`), 400, "bad_json", ""},
		{"scopes not a list", body(`{"type": "oauth_authorization_code", "clientId": "c", "scopes": "a b"}`), 400, "bad_json", ""},
		{"token url for the code flow", body(`{"type": "oauth_authorization_code", "clientId": "c", "tokenUrl": "https://docs.example.com/t"}`), 422, "validation_failed", "auth.tokenUrl"},
		{"client id for bearer", body(`{"type": "bearer", "token": "t", "clientId": "c"}`), 422, "validation_failed", "auth.clientId"},
		{"http token url", body(`{"type": "oauth_client_credentials", "tokenUrl": "http://docs.example.com/t", "clientId": "c", "clientSecret": "` + srvClientSecret + `"}`), 422, "validation_failed", "auth.tokenUrl"},
		{"bad scope", body(`{"type": "oauth_authorization_code", "clientId": "c", "scopes": ["a b"]}`), 422, "validation_failed", "auth.scopes"},
		{"too many scopes", body(`{"type": "oauth_authorization_code", "clientId": "c", "scopes": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u"]}`), 422, "validation_failed", "auth.scopes"},
		{"private token url", body(`{"type": "oauth_client_credentials", "tokenUrl": "https://intra.example/t", "clientId": "c", "clientSecret": "` + srvClientSecret + `"}`), 422, "endpoint_not_public", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, raw := srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", tt.body)
			code, fields := srvErr(t, raw)
			if status != tt.status || code != tt.code {
				t.Fatalf("POST = %d %s, want %d %s", status, raw, tt.status, tt.code)
			}
			if tt.field != "" {
				if _, ok := fields[tt.field]; !ok {
					t.Errorf("fields %v, want %s", fields, tt.field)
				}
			}
			if strings.Contains(string(raw), "SUPERSECRET") || strings.Contains(string(raw), "intra.example") {
				t.Errorf("error body %s leaks", raw)
			}
		})
	}
	if status, raw := srvCall(t, ts, "admin", "GET", "/v1/mcp/servers", ""); status != 200 || strings.Contains(string(raw), "wiki") {
		t.Errorf("a refused create stored a server: %s", raw)
	}
}
