package registry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
)

const srvClientSecret = "cs-SUPERSECRET-client-9876"

func ccAuth(tokenURL string) registry.ServerAuth {
	return registry.ServerAuth{Type: "oauth_client_credentials", TokenURL: tokenURL, ClientID: "client-1", ClientSecret: srvClientSecret, Scopes: []string{"mcp:read"}}
}

func codeAuth(clientID string) registry.ServerAuth {
	return registry.ServerAuth{Type: "oauth_authorization_code", ClientID: clientID, Scopes: []string{"mcp:read", "offline_access"}}
}

func TestCreateOAuthServer(t *testing.T) {
	e := newServerEnv(t)
	s := e.create(t, srvPrincipalA, registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: ccAuth("https://docs.example.com/token"), Acknowledged: true})
	v := s.OAuth()
	if s.CredentialKind().String() != "oauth_client_credentials" || v.ClientID != "client-1" || v.TokenURL != "https://docs.example.com/token" ||
		s.CredentialHint() != "client_secret …9876" {
		t.Fatalf("server = %v %+v %q", s.CredentialKind(), v, s.CredentialHint())
	}
	// The sealed credential opens to the same OAuth part, secret included.
	cred, err := app.OpenCredential(app.NewVault(e.cipher), s.ID(), e.repos[srvTenantA].Creds[s.ID()])
	if o, _ := cred.OAuth(); err != nil || o.ClientSecret != srvClientSecret || o.TokenURL.String() != "https://docs.example.com/token" {
		t.Fatalf("opened credential: %v", err)
	}
	ev := e.audit(srvTenantA)[0]
	if ev.Details["clientId"] != "client-1" || ev.Details["authType"] != "oauth_client_credentials" || strings.Contains(fmt.Sprint(ev.Details), srvClientSecret) {
		t.Errorf("audit details = %v", ev.Details)
	}
	c := e.create(t, srvPrincipalA, registry.CreateServer{Name: "docs", URL: "https://docs.example.com/mcp", Auth: codeAuth(""), Acknowledged: true})
	if c.OAuth().ClientID != "" || c.OAuth().Connected(srvT0) || c.CredentialHint() != "" || len(c.OAuth().Scopes) != 2 {
		t.Errorf("code-flow server = %+v %q", c.OAuth(), c.CredentialHint())
	}
}

func TestCreateOAuthServerErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(e *serverEnv)
		auth   registry.ServerAuth
		code   app.Code
		fields []string
	}{
		{name: "http token url", auth: ccAuth("http://docs.example.com/token"), code: app.CodeValidationFailed, fields: []string{"auth.tokenUrl"}},
		{name: "token url with user info", auth: ccAuth("https://u:p@docs.example.com/token"), code: app.CodeValidationFailed, fields: []string{"auth.tokenUrl"}},
		{name: "token url missing", auth: ccAuth(""), code: app.CodeValidationFailed, fields: []string{"auth.tokenUrl"}},
		{name: "client secret missing", auth: func() registry.ServerAuth { a := ccAuth("https://docs.example.com/t"); a.ClientSecret = ""; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.clientSecret"}},
		{name: "scope with space", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.Scopes = []string{"a b"}
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.scopes"}},
		{name: "scope with quote", auth: func() registry.ServerAuth { a := codeAuth("c"); a.Scopes = []string{`a"`}; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.scopes"}},
		{name: "repeated scope", auth: func() registry.ServerAuth { a := codeAuth("c"); a.Scopes = []string{"a", "a"}; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.scopes"}},
		{name: "code flow with token url", auth: func() registry.ServerAuth { a := codeAuth("c"); a.TokenURL = "https://docs.example.com/t"; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.tokenUrl"}},
		{name: "code flow with token", auth: func() registry.ServerAuth { a := codeAuth("c"); a.Token = srvSecretToken; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.token"}},
		{name: "code flow secret without client id", auth: func() registry.ServerAuth { a := codeAuth(""); a.ClientSecret = srvClientSecret; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.clientSecret"}},
		{name: "code flow secret without issuer", auth: func() registry.ServerAuth { a := codeAuth("c"); a.ClientSecret = srvClientSecret; return a }(),
			code: app.CodeValidationFailed, fields: []string{"auth.issuer"}},
		{name: "code flow issuer over http", auth: func() registry.ServerAuth {
			a := codeAuth("c")
			a.ClientSecret, a.Issuer = srvClientSecret, "http://docs.example.com"
			return a
		}(), code: app.CodeValidationFailed, fields: []string{"auth.issuer"}},
		{name: "code flow issuer on a private host", auth: func() registry.ServerAuth {
			a := codeAuth("c")
			a.ClientSecret, a.Issuer = srvClientSecret, "https://intra.example"
			return a
		}(), code: app.CodeEndpointNotPublic},
		{name: "private_key_jwt without an issuer", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.ClientSecret, a.ClientAuth = "", "private_key_jwt"
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.issuer"}},
		{name: "private_key_jwt with a token URL off the issuer's origin", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.ClientSecret, a.ClientAuth, a.Issuer = "", "private_key_jwt", "https://id.example.com"
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.tokenUrl"}},
		{name: "private_key_jwt with a secret", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.ClientAuth, a.Issuer = "private_key_jwt", "https://docs.example.com"
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.clientSecret"}},
		{name: "client credentials as a public client", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.ClientSecret, a.ClientAuth = "", "none"
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.clientAuth"}},
		{name: "an unknown clientAuth", auth: func() registry.ServerAuth {
			a := ccAuth("https://docs.example.com/t")
			a.ClientAuth = "tls_client_auth"
			return a
		}(),
			code: app.CodeValidationFailed, fields: []string{"auth.clientAuth"}},
		{name: "bearer with scopes", auth: registry.ServerAuth{Type: "bearer", Token: srvSecretToken, Scopes: []string{}},
			code: app.CodeValidationFailed, fields: []string{"auth.scopes"}},
		{name: "header with client id", auth: registry.ServerAuth{Type: "header", Name: "x-a", Value: "v", ClientID: "c"},
			code: app.CodeValidationFailed, fields: []string{"auth.clientId"}},
		{name: "none with client secret", auth: registry.ServerAuth{Type: "none", ClientSecret: srvClientSecret},
			code: app.CodeValidationFailed, fields: []string{"auth.clientSecret"}},
		{name: "token url on a private host", auth: ccAuth("https://intra.example/token"), code: app.CodeEndpointNotPublic},
		{name: "token url on a metadata address", auth: ccAuth("https://169.254.169.254/token"), code: app.CodeEndpointNotPublic},
		{name: "token url with a decoy address", auth: ccAuth("https://mixed.example/token"), code: app.CodeEndpointNotPublic},
		{name: "token url that does not resolve", auth: ccAuth("https://nx.example/token"), code: app.CodeEndpointNotPublic},
		{name: "keys unavailable", setup: func(e *serverEnv) { e.cipher.Keys = nil }, auth: ccAuth("https://docs.example.com/token"), code: app.CodeKeysUnavailable},
		{name: "keys unavailable, code flow", setup: func(e *serverEnv) { e.cipher.Keys = nil }, auth: codeAuth("c"), code: app.CodeKeysUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
				registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: tt.auth, Acknowledged: true})
			got := srvWantCode(t, err, tt.code, srvClientSecret, "169.254", "intra")
			for _, f := range tt.fields {
				if _, ok := got.Fields[f]; !ok {
					t.Errorf("fields = %v, want %q", got.Fields, f)
				}
			}
			if strings.Contains(err.Error(), srvClientSecret) {
				t.Errorf("error chain %q holds the secret", err)
			}
			if r := e.repos[srvTenantA]; r != nil && len(r.Rows) != 0 {
				t.Errorf("a refused create stored %d servers", len(r.Rows))
			}
			if n := len(e.audit(srvTenantA)); n != 0 {
				t.Errorf("a refused create wrote %d audit events", n)
			}
		})
	}
}

func TestPatchOAuthServer(t *testing.T) {
	ptr := func(s string) *string { return &s }
	yes := true
	tests := []struct {
		name  string
		patch registry.PatchServer
		code  app.Code
	}{
		{name: "path change needs auth", patch: registry.PatchServer{URL: ptr("https://wiki.example.com/v2"), Acknowledged: &yes}, code: app.CodeCredentialRequired},
		{name: "path change with auth", patch: registry.PatchServer{URL: ptr("https://wiki.example.com/v2"), Acknowledged: &yes, Auth: &registry.ServerAuth{Type: "oauth_client_credentials", TokenURL: "https://docs.example.com/t2", ClientID: "c2", ClientSecret: srvClientSecret}}},
		{name: "blocked token url", patch: registry.PatchServer{Auth: &registry.ServerAuth{Type: "oauth_client_credentials", TokenURL: "https://intra.example/t", ClientID: "c2", ClientSecret: srvClientSecret}}, code: app.CodeEndpointNotPublic},
		{name: "http token url", patch: registry.PatchServer{Auth: &registry.ServerAuth{Type: "oauth_client_credentials", TokenURL: "http://docs.example.com/t", ClientID: "c2", ClientSecret: srvClientSecret}}, code: app.CodeValidationFailed},
		{name: "to code flow", patch: registry.PatchServer{Auth: &registry.ServerAuth{Type: "oauth_authorization_code", ClientID: "c3"}}},
		{name: "rename keeps auth", patch: registry.PatchServer{Name: ptr("docs")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			s := e.create(t, srvPrincipalA, registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: ccAuth("https://docs.example.com/token"), Acknowledged: true})
			credBefore := string(e.repos[srvTenantA].Creds[s.ID()])
			tt.patch.ID = s.ID()
			got, err := registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, tt.patch)
			if tt.code != "" {
				srvWantCode(t, err, tt.code, srvClientSecret)
				stored := e.repos[srvTenantA].Rows[s.ID()]
				if string(e.repos[srvTenantA].Creds[s.ID()]) != credBefore || stored.URL() != s.URL() || stored.OAuth().ClientID != "client-1" {
					t.Errorf("a refused patch changed the server")
				}
				return
			}
			if err != nil {
				t.Fatalf("Patch = %v", err)
			}
			if tt.patch.Auth != nil && got.OAuth().ClientID != tt.patch.Auth.ClientID {
				t.Errorf("view = %+v", got.OAuth())
			}
			if tt.patch.Auth == nil && got.OAuth().ClientID != "client-1" {
				t.Errorf("view lost: %+v", got.OAuth())
			}
		})
	}
}
