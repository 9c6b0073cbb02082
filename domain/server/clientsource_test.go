package server_test

import (
	"errors"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/server"
)

func TestParseClientAuth(t *testing.T) {
	for _, tt := range []struct {
		in        string
		hasSecret bool
		want      server.ClientAuth
		bad       bool
	}{
		{"", true, server.ClientSecretBasic, false},
		{"", false, server.ClientAuthNone, false},
		{"client_secret_post", true, server.ClientSecretPost, false},
		{"private_key_jwt", false, server.PrivateKeyJWT, false},
		{"none", false, server.ClientAuthNone, false},
		{"Client_Secret_Basic", true, "", true},
		{"tls_client_auth", true, "", true},
		{"client_secret_jwt", true, "", true},
		{" none", false, "", true},
	} {
		got, err := server.ParseClientAuth(tt.in, tt.hasSecret)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseClientAuth(%q, %v) = %q, %v", tt.in, tt.hasSecret, got, err)
		}
	}
}

// TestClientAuthOfCredentials: a method and a secret agree, and
// private_key_jwt binds a client-credentials client to an issuer whose
// origin is the token URL's.
func TestClientAuthOfCredentials(t *testing.T) {
	const tok = "https://id.example.com/oauth/token"
	for _, tt := range []struct {
		name                   string
		secret, method, issuer string
		field                  string // "": accepted
	}{
		{"basic by default", "s3cret-value-123", "", "", ""},
		{"post", "s3cret-value-123", "client_secret_post", "", ""},
		{"post without a secret", "", "client_secret_post", "", "auth.clientSecret"},
		{"assertion", "", "private_key_jwt", "https://id.example.com", ""},
		{"assertion with a secret", "s3cret-value-123", "private_key_jwt", "https://id.example.com", "auth.clientSecret"},
		{"assertion without an issuer", "", "private_key_jwt", "", "auth.issuer"},
		{"assertion for another origin", "", "private_key_jwt", "https://evil.example.com", "auth.tokenUrl"},
		{"assertion for another port", "", "private_key_jwt", "https://id.example.com:8443", "auth.tokenUrl"},
		{"assertion with an http issuer", "", "private_key_jwt", "http://id.example.com", "auth.issuer"},
		{"public client credentials", "", "none", "", "auth.clientAuth"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := server.NewOAuthClientCredentials(tok, "client-1", tt.secret, nil, tt.method, tt.issuer)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				b, _ := c.MarshalSecret()
				back, err := server.UnmarshalCredentialSecret(b)
				if o, _ := back.OAuth(); err != nil || o.ClientAuth != c.View().ClientAuth || o.Issuer != tt.issuer {
					t.Errorf("round trip %v %+v", err, o.ClientAuth)
				}
				return
			}
			if f := fieldOf(err); f != tt.field {
				t.Errorf("error %v on %q, want %s", err, f, tt.field)
			}
		})
	}
}

func fieldOf(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// TestClientSourceOrder: the admin's client id, then the metadata
// document where the server takes one and the instance publishes one,
// then registration at a listed issuer, else registration's refusal.
func TestClientSourceOrder(t *testing.T) {
	given, _ := server.NewOAuthAuthorizationCode("client-1", "", "", nil, "")
	blank, _ := server.NewOAuthAuthorizationCode("", "", "", nil, "")
	og, _ := given.OAuth()
	ob, _ := blank.OAuth()
	as := server.AuthorizationServer{Issuer: "https://as.example.com", ClientIDMetadataDocuments: true,
		RegistrationEndpoint: mustURL(t, "https://as.example.com/register")}
	noDoc := as
	noDoc.ClientIDMetadataDocuments = false
	for _, tt := range []struct {
		name string
		as   server.AuthorizationServer
		o    server.OAuth
		doc  string
		dcr  []string
		want server.ClientSource
		err  error
	}{
		{"given wins", as, og, "https://c.example/doc", []string{as.Issuer}, server.ClientGiven, nil},
		{"document", as, ob, "https://c.example/doc", []string{as.Issuer}, server.ClientFromDocument, nil},
		{"no published document", as, ob, "", []string{as.Issuer}, server.ClientRegistration, nil},
		{"server takes no document", noDoc, ob, "https://c.example/doc", []string{as.Issuer}, server.ClientRegistration, nil},
		{"issuer not listed", noDoc, ob, "https://c.example/doc", nil, 0, server.ErrRegistrationNotAllowed},
	} {
		got, err := tt.as.ClientSourceFor(tt.o, tt.doc, false, tt.dcr)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("%s: %v, %v", tt.name, got, err)
		}
	}
	// The document's client authenticates as the document declares:
	// private_key_jwt when the instance signs, so only at a server that
	// takes it; else registration.
	for _, tt := range []struct {
		methods []string
		signs   bool
		want    server.ClientSource
	}{
		{nil, false, server.ClientFromDocument},
		{nil, true, server.ClientRegistration},
		{[]string{"none"}, true, server.ClientRegistration},
		{[]string{"none"}, false, server.ClientFromDocument},
		{[]string{"private_key_jwt"}, true, server.ClientFromDocument},
		{[]string{"private_key_jwt"}, false, server.ClientRegistration},
	} {
		a := as
		a.TokenEndpointAuthMethods = tt.methods
		if got, err := a.ClientSourceFor(ob, "https://c.example/doc", tt.signs, []string{as.Issuer}); got != tt.want || err != nil {
			t.Errorf("methods %v, signs %v: %v, %v; want %v", tt.methods, tt.signs, got, err, tt.want)
		}
	}
}

func TestMethodsTheServerAnnounces(t *testing.T) {
	for _, tt := range []struct {
		methods  []string
		register server.ClientAuth
		refused  []server.ClientAuth
	}{
		{nil, server.ClientSecretBasic, nil},
		{[]string{"client_secret_post"}, server.ClientSecretPost, []server.ClientAuth{server.ClientSecretBasic, server.PrivateKeyJWT}},
		{[]string{"private_key_jwt"}, server.ClientSecretBasic, []server.ClientAuth{server.ClientSecretBasic, server.ClientAuthNone}},
		{[]string{"none", "client_secret_basic"}, server.ClientSecretBasic, []server.ClientAuth{server.ClientSecretPost}},
	} {
		as := server.AuthorizationServer{TokenEndpointAuthMethods: tt.methods}
		if got := as.RegistrationAuth(); got != tt.register {
			t.Errorf("%v: registration asks %s, want %s", tt.methods, got, tt.register)
		}
		for _, m := range tt.refused {
			if err := as.CheckClientAuth(m); !errors.Is(err, server.ErrClientAuthUnsupported) {
				t.Errorf("%v: %s accepted", tt.methods, m)
			}
		}
		for _, m := range tt.methods {
			if err := as.CheckClientAuth(server.ClientAuth(m)); err != nil {
				t.Errorf("%v: announced %s refused", tt.methods, m)
			}
		}
	}
}

// TestForNewIssuer: only a client the service obtained moves, and
// nothing of it or its connection moves with it.
func TestForNewIssuer(t *testing.T) {
	blank, _ := server.NewOAuthAuthorizationCode("", "", "", []string{"mcp:read"}, "")
	reg, err := blank.WithRegisteredClient("dyn-1", "dyn-SECRET-value-1", "https://as.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := reg.ForNewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	o, _ := moved.OAuth()
	if o.ClientID != "" || o.ClientSecret != "" || o.Issuer != "" || o.RefreshToken != "" || o.Registered || !o.NeedsRegistration() || len(o.Scopes) != 1 {
		t.Errorf("moved %+v", o.ClientID)
	}
	admins, _ := server.NewOAuthAuthorizationCode("client-1", "admin-SECRET-1234", "https://as.example.com", nil, "")
	if _, err := admins.ForNewIssuer(); !errors.Is(err, server.ErrNotMigratable) {
		t.Errorf("the admin's client moved: %v", err)
	}
	b, _ := reg.MarshalSecret()
	back, err := server.UnmarshalCredentialSecret(b)
	if ob, _ := back.OAuth(); err != nil || !ob.Registered {
		t.Errorf("the registration mark is not kept: %v", err)
	}
	cc, _ := server.NewOAuthClientCredentials("https://as.example.com/t", "c", "s3cret-value-123", nil, "", "")
	cb, _ := cc.MarshalSecret()
	forged := []byte(string(cb[:len(cb)-1]) + `,"registered":true}`)
	if _, err := server.UnmarshalCredentialSecret(forged); err == nil {
		t.Error("a client-credentials credential marked registered loads")
	}
}
