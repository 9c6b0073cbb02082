package server_test

import (
	"errors"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/server"
)

func mustCC(t *testing.T) server.Credential {
	t.Helper()
	c, err := server.NewOAuthClientCredentials("https://as.example.com/token", "client-1", "cc-secret-value", []string{"read"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustIssuerCode(t *testing.T, clientID, issuer string) server.Credential {
	t.Helper()
	c, err := server.NewOAuthAuthorizationCode(clientID, "", issuer, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCode(t *testing.T, clientID string) server.Credential {
	t.Helper()
	c, err := server.NewOAuthAuthorizationCode(clientID, "", "", []string{"read", "write"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestApplyOAuthURLChange: the tokens of an OAuth credential are bound to
// the full server URL (RFC 8707), so any URL change needs auth again.
func TestApplyOAuthURLChange(t *testing.T) {
	newPath := mustURL(t, "https://wiki.example.com/other")
	newPort := mustURL(t, "https://wiki.example.com:8443/mcp")
	newHost := mustURL(t, "https://docs.example.com/mcp")
	same := mustURL(t, "https://wiki.example.com/mcp")
	bearer, _ := server.NewBearer("tok-123456789")
	tests := []struct {
		name    string
		cred    server.Credential
		patch   server.Patch
		wantErr error
	}{
		{"client credentials, path change", mustCC(t), server.Patch{URL: &newPath, Acknowledged: ptr(true)}, server.ErrCredentialRequired},
		{"client credentials, port change", mustCC(t), server.Patch{URL: &newPort, Acknowledged: ptr(true)}, server.ErrCredentialRequired},
		{"client credentials, host change", mustCC(t), server.Patch{URL: &newHost, Acknowledged: ptr(true)}, server.ErrCredentialRequired},
		{"code flow, path change", mustCode(t, "c"), server.Patch{URL: &newPath, Acknowledged: ptr(true)}, server.ErrCredentialRequired},
		{"code flow, same url", mustCode(t, "c"), server.Patch{URL: &same}, nil},
		{"code flow, path change with new auth", mustCode(t, "c"), server.Patch{URL: &newPath, Acknowledged: ptr(true), Credential: ptr(mustCode(t, "d"))}, nil},
		{"bearer, path change keeps credential", bearer, server.Patch{URL: &newPath, Acknowledged: ptr(true)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := server.NewServer(serverID, tenantID, mustName(t, "wiki"), same, tt.cred, true, t0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Apply(tt.patch, t1)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Apply() = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil && s.URL() != same {
				t.Errorf("URL changed on refusal: %v", s.URL())
			}
		})
	}
}

func TestServerOAuthView(t *testing.T) {
	u := mustURL(t, "https://wiki.example.com/mcp")
	s, err := server.NewServer(serverID, tenantID, mustName(t, "wiki"), u, mustCC(t), true, t0)
	if err != nil {
		t.Fatal(err)
	}
	v := s.OAuth()
	if v.ClientID != "client-1" || v.TokenURL != "https://as.example.com/token" || len(v.Scopes) != 1 || v.Connected(t0) {
		t.Fatalf("OAuth() = %+v", v)
	}
	v.Scopes[0] = "changed"
	if s.OAuth().Scopes[0] != "read" {
		t.Errorf("OAuth() shares its scopes")
	}
	code := mustCode(t, "pub")
	if _, err := s.Apply(server.Patch{Credential: &code}, t1); err != nil {
		t.Fatal(err)
	}
	if v := s.OAuth(); v.ClientID != "pub" || v.TokenURL != "" || len(v.Scopes) != 2 {
		t.Errorf("after Apply: %+v", v)
	}
	none := server.NoCredential()
	if _, err := s.Apply(server.Patch{Credential: &none}, t1); err != nil {
		t.Fatal(err)
	}
	if v := s.OAuth(); v.ClientID != "" || v.Scopes != nil {
		t.Errorf("after removing: %+v", v)
	}
	r, err := server.UnmarshalServerFromDatabase(serverID, tenantID, "wiki", u.String(), true, "oauth_authorization_code", "",
		server.OAuthView{ClientID: "c", Scopes: []string{"a"}, ConnectedBy: "x", ConnectedAt: t0}, t0, t0, "", 0, nil, t0, t0)
	if err != nil || r.OAuth().ClientID != "c" || !r.OAuth().Connected(t0) {
		t.Errorf("UnmarshalServerFromDatabase: %v %+v", err, r.OAuth())
	}
}

func TestServerConnect(t *testing.T) {
	u := mustURL(t, "https://wiki.example.com/mcp")
	tokenURL := mustURL(t, "https://as.example.com/token")
	code := mustCode(t, "")
	connected, err := code.WithRegisteredClient("dcr-client", "dcr-secret-value", "https://as.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	connected, err = connected.WithConnection("https://as.example.com", tokenURL, "refresh-1", "token:ci", t1)
	if err != nil {
		t.Fatal(err)
	}
	unconnected := mustCode(t, "c")
	tests := []struct {
		name      string
		stored    server.Credential
		cred      server.Credential
		wantField string
	}{
		{"connects", code, connected, ""},
		{"client-credentials server", mustCC(t), connected, "auth.type"},
		{"client-credentials credential", code, mustCC(t), "auth.type"},
		{"not connected", code, unconnected, "auth.connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := server.NewServer(serverID, tenantID, mustName(t, "wiki"), u, tt.stored, true, t0)
			if err != nil {
				t.Fatal(err)
			}
			before := s.OAuth()
			err = s.Connect(tt.cred, t1)
			if tt.wantField == "" {
				v := s.OAuth()
				if err != nil || !v.Connected(t1) || v.ConnectedBy != "token:ci" || v.ClientID != "dcr-client" || s.CredentialHint() != "client_secret …alue" || !s.UpdatedAt().Equal(t1) {
					t.Errorf("Connect() = %v, view %+v hint %q", err, v, s.CredentialHint())
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Fatalf("Connect() = %v, want field %s", err, tt.wantField)
			}
			if s.OAuth().ClientID != before.ClientID || s.OAuth().Connected(t1) {
				t.Errorf("refused Connect changed the server")
			}
		})
	}
}

func TestRegisteredClient(t *testing.T) {
	empty := mustCode(t, "")
	if o, _ := empty.OAuth(); !o.NeedsRegistration() {
		t.Errorf("NeedsRegistration() = false for an empty client id")
	}
	tests := []struct {
		name, id, secret string
		cred             server.Credential
		wantField        string
	}{
		{"registers public client", "dcr-1", "", empty, ""},
		{"registers confidential client", "dcr-1", "s3cret-value", empty, ""},
		{"empty id", "", "", empty, "auth.clientId"},
		{"id with space", "a b", "", empty, "auth.clientId"},
		{"secret with newline", "dcr-1", "a\nb", empty, "auth.clientSecret"},
		{"admin's client id is never replaced", "dcr-1", "", mustCode(t, "admin-client"), "auth.clientId"},
		{"client credentials", "dcr-1", "", mustCC(t), "auth.clientId"},
		{"bearer", "dcr-1", "", server.NoCredential(), "auth.clientId"},
		{"registered at another issuer than the admin named", "dcr-1", "", mustIssuerCode(t, "", "https://other.example.com"), "auth.issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.cred.WithRegisteredClient(tt.id, tt.secret, "https://as.example.com", "")
			if tt.wantField == "" {
				o, _ := c.OAuth()
				if err != nil || o.ClientID != tt.id || o.ClientSecret != tt.secret || o.NeedsRegistration() || o.Issuer != "https://as.example.com" {
					t.Errorf("WithRegisteredClient() = %v, %+v", err, o.ClientID)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Errorf("WithRegisteredClient() = %v, want field %s", err, tt.wantField)
			}
		})
	}
	// A secret without a client id is refused, and so is connecting
	// before the client is registered.
	if _, err := server.NewOAuthAuthorizationCode("", "s3cret", "https://as.example.com", nil, ""); err == nil {
		t.Errorf("secret without client id accepted")
	}
	if _, err := empty.WithConnection("https://as.example.com", mustURL(t, "https://as.example.com/t"), "r", "a", t0); err == nil {
		t.Errorf("connected without client id")
	}
	// An unregistered credential round-trips through the sealed JSON.
	b, err := empty.MarshalSecret()
	if err != nil {
		t.Fatal(err)
	}
	back, err := server.UnmarshalCredentialSecret(b)
	if o, _ := back.OAuth(); err != nil || !o.NeedsRegistration() {
		t.Errorf("round trip: %v", err)
	}
}
