package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// TestRegistrationMetadata pins the client metadata of dynamic client
// registration (RFC 7591): a web client (application_type, required by
// SEP-837 of MCP 2026-07-28, which the conformance suite checks) with the
// redirect URI, the code and refresh grants and client_secret_basic.
func TestRegistrationMetadata(t *testing.T) {
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeTokenJSON(w, http.StatusCreated, `{"client_id":"dyn-1","client_secret":"s3cret-xyz"}`)
	}))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
	oc := NewOAuthClient(c.opts)
	oc.connect = c.connect
	md := ports.OAuthMetadata{RegistrationEndpoint: mustURL(t, fmt.Sprintf("https://%s:%d/register", testHost, ts.port()))}
	reg, err := oc.Register(context.Background(), md, "https://app.test/callback", []string{"mcp:read"}, "")
	if err != nil || reg.ClientID != "dyn-1" || reg.ClientSecret != "s3cret-xyz" || reg.ClientAuth != server.ClientSecretBasic {
		t.Fatalf("Register = %+v, %v", reg, err)
	}
	reqs := ts.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var got struct {
		RedirectURIs    []string `json:"redirect_uris"`
		GrantTypes      []string `json:"grant_types"`
		ResponseTypes   []string `json:"response_types"`
		AuthMethod      string   `json:"token_endpoint_auth_method"`
		ApplicationType string   `json:"application_type"`
		Scope           string   `json:"scope"`
	}
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"application_type web", got.ApplicationType == "web"},
		{"the redirect URI", slices.Equal(got.RedirectURIs, []string{"https://app.test/callback"})},
		{"the code and refresh grants", slices.Equal(got.GrantTypes, []string{"authorization_code", "refresh_token"})},
		{"response type code", slices.Equal(got.ResponseTypes, []string{"code"})},
		{"client_secret_basic", got.AuthMethod == "client_secret_basic"},
		{"the scopes", got.Scope == "mcp:read"},
	} {
		if !c.ok {
			t.Errorf("registration metadata lacks %s: %s", c.what, reqs[0].Body)
		}
	}
}
