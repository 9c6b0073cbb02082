package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
)

func fieldOf(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestOAuthClientCredentialsRefusals(t *testing.T) {
	long := strings.Repeat("a", MaxOAuthClientIDLen+1)
	manyScopes := make([]string, MaxOAuthScopes+1)
	for i := range manyScopes {
		manyScopes[i] = fmt.Sprintf("s%d", i)
	}
	tests := []struct {
		name                 string
		tokenURL, id, secret string
		scopes               []string
		field                string
	}{
		{"http token URL", "http://as.example.com/token", "c", "s3cret", nil, "auth.tokenUrl"},
		{"token URL with user info", "https://u:p@as.example.com/token", "c", "s3cret", nil, "auth.tokenUrl"},
		{"token URL with query", "https://as.example.com/token?x=1", "c", "s3cret", nil, "auth.tokenUrl"},
		{"token URL with fragment", "https://as.example.com/token#f", "c", "s3cret", nil, "auth.tokenUrl"},
		{"empty token URL", "", "c", "s3cret", nil, "auth.tokenUrl"},
		{"ambiguous numeric host", "https://0x7f.1/token", "c", "s3cret", nil, "auth.tokenUrl"},
		{"empty client id", "https://as.example.com/token", "", "s3cret", nil, "auth.clientId"},
		{"client id with space", "https://as.example.com/token", "a b", "s3cret", nil, "auth.clientId"},
		{"client id with newline", "https://as.example.com/token", "a\nb", "s3cret", nil, "auth.clientId"},
		{"client id too long", "https://as.example.com/token", long, "s3cret", nil, "auth.clientId"},
		{"missing secret", "https://as.example.com/token", "c", "", nil, "auth.clientSecret"},
		{"secret with CRLF", "https://as.example.com/token", "c", "a\r\nX-Evil: 1", nil, "auth.clientSecret"},
		{"secret too long", "https://as.example.com/token", "c", strings.Repeat("s", 4097), nil, "auth.clientSecret"},
		{"scope with space", "https://as.example.com/token", "c", "s3cret", []string{"read write"}, "auth.scopes"},
		{"scope with quote", "https://as.example.com/token", "c", "s3cret", []string{`re"ad`}, "auth.scopes"},
		{"scope with backslash", "https://as.example.com/token", "c", "s3cret", []string{`re\ad`}, "auth.scopes"},
		{"empty scope", "https://as.example.com/token", "c", "s3cret", []string{""}, "auth.scopes"},
		{"non-ASCII scope", "https://as.example.com/token", "c", "s3cret", []string{"lesé"}, "auth.scopes"},
		{"repeated scope", "https://as.example.com/token", "c", "s3cret", []string{"a", "a"}, "auth.scopes"},
		{"too many scopes", "https://as.example.com/token", "c", "s3cret", manyScopes, "auth.scopes"},
		{"scope too long", "https://as.example.com/token", "c", "s3cret", []string{strings.Repeat("s", MaxOAuthScopeLen+1)}, "auth.scopes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOAuthClientCredentials(tt.tokenURL, tt.id, tt.secret, tt.scopes, "", "")
			if got := fieldOf(err); got != tt.field {
				t.Fatalf("field = %q (err %v), want %q", got, err, tt.field)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestOAuthAuthorizationCodeSecretIsOptional(t *testing.T) {
	c, err := NewOAuthAuthorizationCode("client-1", "", "", []string{"read"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hint() != "" || c.HeaderName() != "" || c.HeaderValue() != "" {
		t.Fatalf("public client: hint %q header %q/%q", c.Hint(), c.HeaderName(), c.HeaderValue())
	}
	if _, err := NewOAuthAuthorizationCode("client-1", "bad secret", "https://as.example.com", nil, ""); fieldOf(err) != "auth.clientSecret" {
		t.Fatalf("a secret with a space: %v", err)
	}
	if o, _ := c.OAuth(); o.Connected() || c.View().Connected(time.Now()) {
		t.Fatal("a new code-flow credential is connected")
	}
}

func TestOAuthCredentialNeverShowsItsSecrets(t *testing.T) {
	c, err := NewOAuthAuthorizationCode("client-1", "client-secret-wxyz", "https://as.example.com", []string{"read"}, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := ParseURL("https://as.example.com/token")
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, err = c.WithConnection("https://as.example.com", tok, "refresh-token-9876", "admin token ci", at)
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Hint(); h != "client_secret …wxyz" {
		t.Fatalf("hint %q", h)
	}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(s, "client-secret") || strings.Contains(s, "refresh-token") {
			t.Fatalf("formatting shows a secret: %s", s)
		}
	}
	v := c.View()
	if v.ClientID != "client-1" || v.TokenURL != "https://as.example.com/token" || v.ConnectedBy != "admin token ci" || !v.ConnectedAt.Equal(at) || !v.Connected(at) {
		t.Fatalf("view %+v", v)
	}
}

func TestOAuthSecretRoundTrip(t *testing.T) {
	cc, err := NewOAuthClientCredentials("https://as.example.com/token", "svc", "s3cret-abcd", []string{"wiki:read", "tickets:read"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := NewOAuthAuthorizationCode("pub", "", "", nil, "")
	tok, _ := ParseURL("https://as.example.com/oauth/token")
	connected, err := code.WithConnection("https://as.example.com", tok, "rt-1", "alice", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := connected.WithRefreshToken("rt-2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Credential{cc, code, connected, rotated} {
		b, err := c.MarshalSecret()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalCredentialSecret(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		o1, _ := c.OAuth()
		o2, ok := back.OAuth()
		if !ok || back.Kind() != c.Kind() || fmt.Sprintf("%+v", o1) != fmt.Sprintf("%+v", o2) {
			t.Fatalf("round trip changed %+v into %+v", o1, o2)
		}
	}
	if o, _ := rotated.OAuth(); o.RefreshToken != "rt-2" || o.ConnectedBy != "alice" {
		t.Fatalf("rotation lost the connection: %+v", o)
	}
	if _, err := code.WithRefreshToken("rt"); err == nil {
		t.Fatal("an unconnected credential took a refresh token")
	}
	if _, err := cc.WithConnection("https://as.example.com", tok, "rt", "a", time.Now()); err == nil {
		t.Fatal("client credentials took a connection")
	}
}

func TestOAuthMalformedStoredSecrets(t *testing.T) {
	for _, raw := range []string{
		`{"type":"oauth_client_credentials","clientId":"c","clientSecret":"s"}`,                                              // no token URL
		`{"type":"oauth_client_credentials","tokenUrl":"http://as/t","clientId":"c","clientSecret":"s"}`,                     // http
		`{"type":"oauth_client_credentials","tokenUrl":"https://as/t","clientId":"c","clientSecret":"s","refreshToken":"r"}`, // a refresh token
		`{"type":"oauth_client_credentials","tokenUrl":"https://as/t","clientId":"c","clientSecret":"s","token":"t"}`,        // static field
		`{"type":"oauth_authorization_code","clientId":"c","refreshToken":"r"}`,                                              // connected without token URL
		`{"type":"oauth_authorization_code","clientId":"c","tokenUrl":"https://as/t"}`,                                       // token URL without connection
		`{"type":"oauth_authorization_code","clientId":"c","tokenUrl":"https://as/t","refreshToken":"r\r\nX: y","issuer":"https://as","connectedBy":"a","connectedAt":"2026-01-01T00:00:00Z"}`,
		`{"type":"bearer","token":"t","clientId":"c"}`, // OAuth field on a static kind
		`{"type":"none","scopes":[]}`,
	} {
		if _, err := UnmarshalCredentialSecret([]byte(raw)); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
}

// An authorization server that issues no refresh token: the connection
// holds the exchange's access token and ends when it expires.
func TestOAuthAccessOnlyConnection(t *testing.T) {
	code, _ := NewOAuthAuthorizationCode("pub", "", "", nil, "")
	tok, _ := ParseURL("https://as.example.com/token")
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	exp := at.Add(time.Hour)
	c, err := code.WithAccessOnlyConnection("https://as.example.com", tok, "access-token-4321", exp, "alice", at)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := c.OAuth()
	if !o.Connected() || o.RefreshToken != "" || o.AccessToken != "access-token-4321" || !o.AccessExpiresAt.Equal(exp) {
		t.Fatalf("oauth %+v", o)
	}
	v := c.View()
	if !v.Connected(at.Add(59*time.Minute)) || v.Connected(exp) || !v.ExpiresAt.Equal(exp) {
		t.Fatalf("view %+v: connected until the expiry only", v)
	}
	if strings.Contains(fmt.Sprintf("%v %#v", c, c), "access-token") {
		t.Fatal("formatting shows the access token")
	}
	b, err := c.MarshalSecret()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalCredentialSecret(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if o2, _ := back.OAuth(); fmt.Sprintf("%+v", o2) != fmt.Sprintf("%+v", o) {
		t.Fatalf("round trip: %+v, want %+v", o2, o)
	}
	if _, err := c.WithRefreshToken("rt"); err == nil {
		t.Fatal("an access-only connection took a rotated refresh token")
	}
	for name, f := range map[string]func() (Credential, error){
		"expiry not after the connection": func() (Credential, error) {
			return code.WithAccessOnlyConnection("https://as.example.com", tok, "a", at, "alice", at)
		},
		"access token with a line break": func() (Credential, error) {
			return code.WithAccessOnlyConnection("https://as.example.com", tok, "a\nb", exp, "alice", at)
		},
		"empty access token": func() (Credential, error) {
			return code.WithAccessOnlyConnection("https://as.example.com", tok, "", exp, "alice", at)
		},
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, raw := range []string{
		`{"type":"oauth_authorization_code","clientId":"c","tokenUrl":"https://as/t","accessToken":"a","issuer":"https://as","connectedBy":"a","connectedAt":"2026-01-01T00:00:00Z"}`,
		`{"type":"oauth_authorization_code","clientId":"c","tokenUrl":"https://as/t","refreshToken":"r","accessToken":"a","accessExpiresAt":"2026-01-02T00:00:00Z","issuer":"https://as","connectedBy":"a","connectedAt":"2026-01-01T00:00:00Z"}`,
		`{"type":"oauth_authorization_code","clientId":"c","accessExpiresAt":"2026-01-02T00:00:00Z"}`,
		`{"type":"oauth_client_credentials","tokenUrl":"https://as/t","clientId":"c","clientSecret":"s","accessToken":"a"}`,
	} {
		if _, err := UnmarshalCredentialSecret([]byte(raw)); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
}

// TestOAuthCodeFlowIssuer: a client secret is bound to the authorization
// server the admin names; a connection, a registration or a stored value
// never switches it.
func TestOAuthCodeFlowIssuer(t *testing.T) {
	const iss = "https://as.example.com"
	tok, _ := ParseURL("https://as.example.com/token")
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ctor := []struct {
		name, id, secret, issuer string
		wantField                string
	}{
		{"secret with issuer", "c", "s3cret-1", iss, ""},
		{"public client without issuer", "c", "", "", ""},
		{"public client with issuer", "c", "", iss, ""},
		{"dynamic registration at a named issuer", "", "", iss, ""},
		{"secret without issuer", "c", "s3cret-1", "", "auth.issuer"},
		{"issuer over http", "c", "s3cret-1", "http://as.example.com", "auth.issuer"},
		{"issuer with a query", "c", "s3cret-1", "https://as.example.com?x=1", "auth.issuer"},
		{"issuer with a fragment", "c", "s3cret-1", "https://as.example.com#x", "auth.issuer"},
		{"issuer with user info", "c", "s3cret-1", "https://u@as.example.com", "auth.issuer"},
	}
	for _, tc := range ctor {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewOAuthAuthorizationCode(tc.id, tc.secret, tc.issuer, nil, "")
			if tc.wantField != "" {
				if fieldOf(err) != tc.wantField {
					t.Fatalf("err = %v, want field %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o, _ := c.OAuth(); o.Issuer != tc.issuer || c.View().Issuer != tc.issuer {
				t.Fatalf("issuer %q, view %q", o.Issuer, c.View().Issuer)
			}
			back, err := UnmarshalCredentialSecret(must(c.MarshalSecret()))
			if o, _ := back.OAuth(); err != nil || o.Issuer != tc.issuer {
				t.Fatalf("round trip: %v %q", err, o.Issuer)
			}
		})
	}

	bound, _ := NewOAuthAuthorizationCode("c", "s3cret-1", iss, nil, "")
	conn := []struct {
		name, issuer string
		cred         Credential
		ok           bool
	}{
		{"connects at its issuer", iss, bound, true},
		{"another issuer is refused", "https://evil.example.com", bound, false},
		{"a longer issuer is refused", iss + ".evil.test", bound, false},
		{"a path below the issuer is refused", iss + "/other", bound, false},
	}
	for _, tc := range conn {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.cred.WithConnection(tc.issuer, tok, "rt-1", "alice", at)
			if !tc.ok {
				if fieldOf(err) != "auth.issuer" {
					t.Fatalf("WithConnection(%s) = %v, want auth.issuer", tc.issuer, err)
				}
				if _, err := tc.cred.WithAccessOnlyConnection(tc.issuer, tok, "at-1", at.Add(time.Hour), "alice", at); fieldOf(err) != "auth.issuer" {
					t.Fatalf("WithAccessOnlyConnection(%s) = %v, want auth.issuer", tc.issuer, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := UnmarshalCredentialSecret(must(c.MarshalSecret()))
			if o, _ := back.OAuth(); err != nil || o.Issuer != iss || !o.Connected() {
				t.Fatalf("round trip: %v %+v", err, o.Issuer)
			}
		})
	}

	// A secret stored before the issuer was required still loads, shows
	// that it needs one, and cannot connect until the admin names it.
	legacy := []byte(`{"type":"oauth_authorization_code","clientId":"c","clientSecret":"s3cret-1"}`)
	c, err := UnmarshalCredentialSecret(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := c.OAuth(); !o.NeedsIssuer() {
		t.Fatal("a legacy secret without issuer does not need one")
	}
	if _, err := c.WithConnection(iss, tok, "rt-1", "alice", at); fieldOf(err) != "auth.issuer" {
		t.Fatalf("legacy credential connected: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
