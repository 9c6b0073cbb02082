//go:build signedoff

package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// testOAuthCredentials: the OAuth kinds through the binary. The view shows
// type, client id, scopes, hint and the code flow's connection; the client
// secret is in no view, row, audit event or log line.
func testOAuthCredentials(t *testing.T, in *instance) {
	_, c := in.tenant("oauth", "tenant:manage")
	const (
		secretPrefix = "cnry-oauth-K4j8H2g6"
		secret       = secretPrefix + "-qrst"
	)
	in.secret(secret, secretPrefix)

	cc := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "cc", "url": "https://93.184.216.34/mcp", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_client_credentials", "tokenUrl": "https://93.184.216.35/token", "clientId": "client-1",
			"clientSecret": secret, "scopes": []string{"mcp:read"}}})
	expect(t, "create with client credentials", cc, 201, "")
	if got := fmt.Sprint(cc.Body["auth"]); got != fmt.Sprint(map[string]any{"type": "oauth_client_credentials", "clientId": "client-1",
		"scopes": []any{"mcp:read"}, "hint": "client_secret …qrst", "clientAuth": "client_secret_basic"}) {
		t.Errorf("auth = %s", got)
	}
	code := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "code", "url": "https://93.184.216.34/other", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": "pub"}})
	expect(t, "create with the code flow", code, 201, "")
	if got := fmt.Sprint(code.Body["auth"]); got != fmt.Sprint(map[string]any{"type": "oauth_authorization_code", "clientId": "pub",
		"scopes": []any{}, "connection": map[string]any{"state": "needs_connection", "by": nil, "at": nil}, "clientAuth": "none"}) {
		t.Errorf("auth = %s", got)
	}
	ccID := str(cc.Body, "id")

	// A client secret of the code flow is bound to the issuer the admin
	// names: without one it is refused; with one the view shows it.
	r0 := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "conf", "url": "https://93.184.216.34/conf", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": "web", "clientSecret": secret}})
	expect(t, "code flow secret without issuer", r0, 422, "validation_failed")
	if f := fmt.Sprint(r0.Body["error"]); !strings.Contains(f, "auth.issuer") {
		t.Errorf("error = %s, want the field auth.issuer", f)
	}
	r0 = c.do("POST", "/v1/mcp/servers", map[string]any{"name": "conf", "url": "https://93.184.216.34/conf", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": "web", "clientSecret": secret, "issuer": "https://93.184.216.36"}})
	expect(t, "code flow secret with issuer", r0, 201, "")
	if a, _ := r0.Body["auth"].(map[string]any); a["issuer"] != "https://93.184.216.36" {
		t.Errorf("auth = %v, want the issuer", a)
	}
	r0 = c.do("POST", "/v1/mcp/servers", map[string]any{"name": "conf2", "url": "https://93.184.216.34/conf", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": "web", "clientSecret": secret, "issuer": "https://169.254.169.254"}})
	expect(t, "issuer on the metadata address", r0, 422, "endpoint_not_public")

	// Any URL change of an OAuth server needs auth again, a path change too.
	r := c.do("PATCH", "/v1/mcp/servers/"+ccID, map[string]any{"url": "https://93.184.216.34/v2", "acknowledged": true})
	expect(t, "path change without auth", r, 422, "credential_required")
	// A token URL on a blocked address is refused at save time.
	r = c.do("PATCH", "/v1/mcp/servers/"+ccID, map[string]any{"auth": map[string]any{"type": "oauth_client_credentials",
		"tokenUrl": "https://169.254.169.254/token", "clientId": "c", "clientSecret": secret}})
	expect(t, "token URL on the metadata address", r, 422, "endpoint_not_public")
	r = c.do("POST", "/v1/mcp/servers", map[string]any{"name": "bad", "url": "https://93.184.216.34/x", "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": "pub", "refreshToken": "r"}})
	expect(t, "unknown auth field", r, 400, "bad_json")

	for i, v := range []response{cc, code, c.do("GET", "/v1/mcp/servers", nil), c.do("GET", "/v1/audit", nil)} {
		expectNoEcho(t, fmt.Sprintf("view %d", i), v, secretPrefix)
	}
	db := in.db()
	var rowJSON, audit string
	var enc []byte
	if err := db.QueryRow(context.Background(), `SELECT row_to_json(s)::text, encrypted_credentials FROM mcp_servers s WHERE id = $1`, ccID).
		Scan(&rowJSON, &enc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rowJSON, secretPrefix) || strings.Contains(rowJSON, hex.EncodeToString([]byte(secretPrefix))) || strings.Contains(string(enc), secretPrefix) {
		t.Errorf("the row holds the client secret: %s", rowJSON)
	}
	if !strings.Contains(rowJSON, `"clientId": "client-1"`) && !strings.Contains(rowJSON, `"clientId":"client-1"`) {
		t.Errorf("auth_public missing from the row: %s", rowJSON)
	}
	if err := db.QueryRow(context.Background(), `SELECT coalesce(string_agg(row_to_json(a)::text, E'\n'), '') FROM audit_events a`).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(audit, secretPrefix) {
		t.Errorf("audit_events hold the client secret")
	}
	if strings.Contains(in.logs.String(), secretPrefix) {
		t.Errorf("the logs hold the client secret")
	}
}
