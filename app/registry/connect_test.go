package registry_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

const (
	cnSession     = "session-id-hash-of-the-admin"
	cnRedirect    = "https://codelotse.example.com/ui/oauth/callback"
	cnIssuer      = "https://as.example.com"
	cnRefresh     = "rt-SUPERSECRET-refresh-5555"
	cnDCRSecret   = "dcr-SUPERSECRET-client-4444"
	cnAccessToken = "at-SUPERSECRET-access-3333"
)

type connectEnv struct {
	*serverEnv
	oauth *portfake.OAuthClient
	deps  registry.ConnectDeps
	srv   *server.Server
}

func mustParse(t *testing.T, s string) server.URL {
	t.Helper()
	u, err := server.ParseURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func newConnectEnv(t *testing.T) *connectEnv {
	e := &connectEnv{serverEnv: newServerEnv(t)}
	e.oauth = &portfake.OAuthClient{
		Metadata: ports.OAuthMetadata{
			Resource: "https://wiki.example.com/mcp", Issuer: cnIssuer,
			AuthorizationEndpoint: mustParse(t, "https://as.example.com/authorize"),
			TokenEndpoint:         mustParse(t, "https://as.example.com/token"),
			RegistrationEndpoint:  mustParse(t, "https://as.example.com/register"),
			IssParameterSupported: true, CodeChallengeMethods: []string{"plain", "S256"},
		},
		RegisteredID: "dcr-client-1", RegisteredSecret: cnDCRSecret,
		Tokens: ports.OAuthTokens{AccessToken: cnAccessToken, RefreshToken: cnRefresh, ExpiresAt: srvT0.Add(time.Hour)},
	}
	e.deps = registry.ConnectDeps{Tenants: e.tenants, Cipher: app.NewVault(e.cipher), OAuth: e.oauth, Clock: e.clock, Gates: srvOpenGates, Rand: rand.Reader}
	return e
}

// codeServer registers a code-flow server with the client id given.
func (e *connectEnv) codeServer(t *testing.T, clientID string) *server.Server {
	return e.create(t, srvPrincipalA, registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: codeAuth(clientID), Acknowledged: true})
}

func (e *connectEnv) start(p ports.Principal, serverID string) (string, error) {
	return registry.NewStartConnectHandler(e.deps).Handle(context.Background(), p, registry.StartConnect{ServerID: serverID, SessionID: cnSession, RedirectURI: cnRedirect})
}

func (e *connectEnv) finish(p ports.Principal, cmd registry.FinishConnect) (*server.Server, error) {
	return registry.NewFinishConnectHandler(e.deps).Handle(context.Background(), p, cmd)
}

// callback is what the authorization server sends back for authURL.
func callback(t *testing.T, authURL string) registry.FinishConnect {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return registry.FinishConnect{SessionID: cnSession, State: u.Query().Get("state"), Code: "code-1", Iss: cnIssuer}
}

// An authorization server that issues no refresh token: the connection
// keeps the exchange's access token, sealed, until it expires (an hour when
// the answer named no expiry).
func TestConnectWithoutRefreshToken(t *testing.T) {
	for name, tc := range map[string]struct{ expires, want time.Time }{
		"expiry named":    {srvT0.Add(20 * time.Minute), srvT0.Add(20 * time.Minute)},
		"no expiry named": {time.Time{}, srvT0.Add(server.AccessOnlyLifetime)},
	} {
		t.Run(name, func(t *testing.T) {
			e := newConnectEnv(t)
			e.oauth.Tokens = ports.OAuthTokens{AccessToken: cnAccessToken, ExpiresAt: tc.expires}
			s := e.codeServer(t, "client-1")
			authURL, err := e.start(srvPrincipalA, s.ID())
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.finish(srvPrincipalA, callback(t, authURL))
			if err != nil {
				t.Fatalf("FinishConnect = %v", err)
			}
			v := got.OAuth()
			if !v.ExpiresAt.Equal(tc.want) || !v.Connected(tc.want.Add(-time.Second)) || v.Connected(tc.want) {
				t.Errorf("view %+v: connected until %s only", v, tc.want)
			}
			cred, err := app.OpenCredential(app.NewVault(e.cipher), s.ID(), e.repos[srvTenantA].Creds[s.ID()])
			if o, _ := cred.OAuth(); err != nil || o.RefreshToken != "" || o.AccessToken != cnAccessToken || !o.AccessExpiresAt.Equal(tc.want) {
				t.Errorf("stored credential %v: %v", cred, err)
			}
			if strings.Contains(string(e.repos[srvTenantA].Creds[s.ID()]), cnAccessToken) {
				t.Error("the access token is stored in clear")
			}
		})
	}
}

func TestConnect(t *testing.T) {
	e := newConnectEnv(t)
	s := e.codeServer(t, "client-1")
	authURL, err := e.start(srvPrincipalA, s.ID())
	if err != nil {
		t.Fatalf("StartConnect = %v", err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if u.Scheme+"://"+u.Host+u.Path != "https://as.example.com/authorize" || q.Get("response_type") != "code" || q.Get("client_id") != "client-1" ||
		q.Get("redirect_uri") != cnRedirect || q.Get("scope") != "mcp:read offline_access" || q.Get("code_challenge_method") != "S256" ||
		q.Get("resource") != "https://wiki.example.com/mcp" || len(q.Get("state")) != 43 || len(q.Get("code_challenge")) != 43 {
		t.Fatalf("authorization URL %s", authURL)
	}
	// The state is stored only as its hash, bound to the session's hash,
	// the verifier only sealed under the state.
	states := e.tenants.Txs[srvTenantA].OAuthStateRepo
	if len(states.Rows) != 1 || len(states.Sealed) != 1 {
		t.Fatalf("%d pending states, %d sealed secrets", len(states.Rows), len(states.Sealed))
	}
	stateHash := sha256.Sum256([]byte(q.Get("state")))
	sessionHash := sha256.Sum256([]byte(cnSession))
	for k, st := range states.Rows {
		if k != hex.EncodeToString(stateHash[:]) || !bytes.Equal(st.StateHash(), stateHash[:]) || !bytes.Equal(st.SessionHash(), sessionHash[:]) ||
			st.ServerID() != s.ID() || !st.ExpiresAt().Equal(srvT0.Add(10*time.Minute)) || st.RedirectURI() != cnRedirect ||
			strings.Contains(fmt.Sprintf("%+v", st), q.Get("state")) || strings.Contains(string(states.Sealed[k]), q.Get("state")) {
			t.Errorf("stored state %+v", st)
		}
	}

	got, err := e.finish(srvPrincipalA, callback(t, authURL))
	if err != nil {
		t.Fatalf("FinishConnect = %v", err)
	}
	v := got.OAuth()
	if !v.Connected(srvT0) || v.ConnectedBy != "token:tok-a" || !v.ConnectedAt.Equal(srvT0) || v.Issuer != cnIssuer || v.TokenURL != "https://as.example.com/token" {
		t.Errorf("connected view %+v", v)
	}
	x := e.oauth.Exchanges[0]
	challenge := sha256.Sum256([]byte(x.Verifier))
	if x.TokenURL.String() != "https://as.example.com/token" || x.Resource.String() != "https://wiki.example.com/mcp" || x.RedirectURI != cnRedirect ||
		x.ClientID != "client-1" || x.Code != "code-1" || base64.RawURLEncoding.EncodeToString(challenge[:]) != q.Get("code_challenge") {
		t.Errorf("exchange %+v", x)
	}
	cred, err := app.OpenCredential(app.NewVault(e.cipher), s.ID(), e.repos[srvTenantA].Creds[s.ID()])
	if o, _ := cred.OAuth(); err != nil || o.RefreshToken != cnRefresh {
		t.Errorf("stored credential: %v", err)
	}
	events := e.audit(srvTenantA)
	last := events[len(events)-1]
	if last.Action != "server.connect" || last.Details["clientId"] != "client-1" || last.Actor != "token:tok-a" {
		t.Errorf("audit %+v", last)
	}
	for _, secret := range []string{cnRefresh, cnAccessToken, q.Get("state"), x.Verifier} {
		if strings.Contains(fmt.Sprint(events), secret) {
			t.Errorf("audit holds a secret")
		}
	}
	// Single use: the same callback again is refused.
	_, err = e.finish(srvPrincipalA, callback(t, authURL))
	srvWantCode(t, err, app.CodeValidationFailed)
}

func TestConnectDynamicRegistration(t *testing.T) {
	e := newConnectEnv(t)
	e.deps.DCRIssuers = registry.DCRIssuers{"https://other.example", cnIssuer}
	s := e.codeServer(t, "")
	// Connect three times (two abandoned at the authorization server):
	// one registration per server and issuer, kept with the credential.
	var authURL string
	for i := range 3 {
		var err error
		authURL, err = e.start(srvPrincipalA, s.ID())
		if err != nil {
			t.Fatalf("StartConnect %d = %v", i, err)
		}
		if u, _ := url.Parse(authURL); u.Query().Get("client_id") != "dcr-client-1" || len(e.oauth.Registered) != 1 || e.oauth.Registered[0] != cnRedirect {
			t.Fatalf("start %d: authorization URL %s, registered %v", i, authURL, e.oauth.Registered)
		}
	}
	if e.oauth.Issuers[1] != cnIssuer || e.oauth.Issuers[2] != cnIssuer {
		t.Errorf("later discoveries not bound to the registration's issuer: %q", e.oauth.Issuers)
	}
	kept, err := app.OpenCredential(app.NewVault(e.cipher), s.ID(), e.repos[srvTenantA].Creds[s.ID()])
	if o, _ := kept.OAuth(); err != nil || o.ClientID != "dcr-client-1" || o.ClientSecret != cnDCRSecret || o.Issuer != cnIssuer || o.Connected() {
		t.Fatalf("kept registration: %v %+v", err, o.ClientID)
	}
	var registrations int
	for _, ev := range e.audit(srvTenantA) {
		if ev.Action == registry.ActionServerRegisterClient {
			registrations++
			if ev.Details["issuer"] != cnIssuer || ev.Details["clientId"] != "dcr-client-1" || strings.Contains(fmt.Sprint(ev), cnDCRSecret) {
				t.Errorf("audit %+v", ev)
			}
		}
	}
	if registrations != 1 {
		t.Errorf("%d register_client events, want 1", registrations)
	}
	if v := e.repos[srvTenantA].Rows[s.ID()].OAuth(); v.ClientID != "dcr-client-1" || v.Issuer != cnIssuer {
		t.Errorf("view after registration %+v", v)
	}
	got, err := e.finish(srvPrincipalA, callback(t, authURL))
	if err != nil {
		t.Fatalf("FinishConnect = %v", err)
	}
	if got.OAuth().ClientID != "dcr-client-1" || e.oauth.Exchanges[0].ClientSecret != cnDCRSecret || got.CredentialHint() != "client_secret …4444" {
		t.Errorf("connected %+v hint %q", got.OAuth(), got.CredentialHint())
	}
}

// TestConnectRefusals: every hostile or broken start and callback is
// refused with nothing stored: the server stays unconnected, its
// credential unchanged, no server.connect event.
func TestConnectRefusals(t *testing.T) {
	type env = connectEnv
	tests := []struct {
		name     string
		dcr      bool                                                                    // the server has no client id
		setup    func(t *testing.T, e *env)                                              // before the start
		startErr app.Code                                                                // the start fails with this code
		field    string                                                                  // the field of a validation_failed
		mutate   func(t *testing.T, e *env, cmd *registry.FinishConnect) ports.Principal // before the callback
		code     app.Code
		exchange bool // the code reached the token endpoint
	}{
		{name: "gates closed at start", setup: func(t *testing.T, e *env) { e.deps.Gates = app.Gates{Instance: gate.InstanceAllowed} }, startErr: app.CodeNotSignedOff},
		{name: "instance disabled at start", setup: func(t *testing.T, e *env) {
			e.deps.Gates = app.Gates{SignedOff: true, Instance: gate.InstanceDisabled}
		}, startErr: app.CodeInstanceDisabled},
		{name: "wrong auth type", setup: func(t *testing.T, e *env) {
			e.patchAuth(t, registry.ServerAuth{Type: "bearer", Token: srvSecretToken})
		}, startErr: app.CodeValidationFailed, field: "auth.type"},
		{name: "client credentials cannot connect", setup: func(t *testing.T, e *env) {
			e.patchAuth(t, ccAuth("https://docs.example.com/token"))
		}, startErr: app.CodeValidationFailed, field: "auth.type"},
		{name: "dcr not allowed", dcr: true, startErr: app.CodeValidationFailed, field: "auth.clientId"},
		{name: "dcr for another issuer", dcr: true, setup: func(t *testing.T, e *env) {
			e.deps.DCRIssuers = registry.DCRIssuers{"https://as.example.com/"}
		}, startErr: app.CodeValidationFailed, field: "auth.clientId"},
		{name: "dcr without registration endpoint", dcr: true, setup: func(t *testing.T, e *env) {
			e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
			e.oauth.Metadata.RegistrationEndpoint = server.URL{}
		}, startErr: app.CodeValidationFailed, field: "auth.clientId"},
		{name: "dcr rejected", dcr: true, setup: func(t *testing.T, e *env) {
			e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
			e.oauth.RegisterErr = ports.ErrOAuthRejected
		}, startErr: app.CodeServerUnauthorized},
		{name: "no S256", setup: func(t *testing.T, e *env) { e.oauth.Metadata.CodeChallengeMethods = []string{"plain"} }, startErr: app.CodeProtocolError},
		{name: "no PKCE methods announced", setup: func(t *testing.T, e *env) { e.oauth.Metadata.CodeChallengeMethods = nil }, startErr: app.CodeProtocolError},
		{name: "metadata unusable", setup: func(t *testing.T, e *env) { e.oauth.DiscoverErr = ports.ErrOAuthMetadata }, startErr: app.CodeProtocolError},
		{name: "authorization server blocked", setup: func(t *testing.T, e *env) { e.oauth.DiscoverErr = ports.ErrAddressBlocked }, startErr: app.CodeServerUnreachable},
		{name: "keys unavailable at start", setup: func(t *testing.T, e *env) { e.cipher.Keys = nil }, startErr: app.CodeKeysUnavailable},

		{name: "state mismatch", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.State = "not-the-state"
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "no state", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.State = ""
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "other session", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.SessionID = "the-attackers-session"
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "no session", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.SessionID = ""
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "other tenant", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			return srvPrincipalB
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "expired", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.clock.At = srvT0.Add(10 * time.Minute)
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "replayed", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.ExchangeErr = ports.ErrOAuthRejected
			if _, err := e.finish(srvPrincipalA, *c); err == nil {
				t.Fatal("first callback succeeded")
			}
			e.oauth.ExchangeErr = nil
			e.oauth.Exchanges = nil
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "issuer mismatch", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.Iss = "https://evil.example"
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "iss"},
		{name: "issuer missing though announced", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.Iss = ""
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "iss"},
		{name: "issuer mismatch though not announced", setup: func(t *testing.T, e *env) { e.oauth.Metadata.IssParameterSupported = false },
			mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
				c.Iss = "https://evil.example"
				return srvPrincipalA
			}, code: app.CodeValidationFailed, field: "iss"},
		{name: "authorization server error", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.Error, c.Code = "access_denied", ""
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "error"},
		{name: "no code", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.Code = ""
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "code"},
		{name: "oversized code", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			c.Code = strings.Repeat("a", 5000)
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "state"},
		{name: "gates closed at callback", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.deps.Gates = app.Gates{Instance: gate.InstanceAllowed}
			return srvPrincipalA
		}, code: app.CodeNotSignedOff},
		{name: "credential changed meanwhile", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.patchAuth(t, codeAuth("another-client"))
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "auth"},
		{name: "same client, other scopes meanwhile", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			a := codeAuth("client-1")
			a.Scopes = []string{"other"}
			e.patchAuth(t, a)
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "auth"},
		{name: "credential changed during the exchange", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.WhileExchanging = func() {
				a := codeAuth("client-1")
				a.Scopes = []string{"other"}
				e.patchAuth(t, a)
			}
			return srvPrincipalA
		}, code: app.CodeValidationFailed, field: "auth", exchange: true},
		{name: "exchange rejected", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.ExchangeErr = ports.ErrOAuthRejected
			return srvPrincipalA
		}, code: app.CodeServerUnauthorized, exchange: true},
		{name: "token endpoint times out", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.ExchangeErr = ports.ErrTimeout
			return srvPrincipalA
		}, code: app.CodeTimeout, exchange: true},
		{name: "neither refresh nor access token", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.Tokens.RefreshToken, e.oauth.Tokens.AccessToken = "", ""
			return srvPrincipalA
		}, code: app.CodeProtocolError, exchange: true},
		{name: "no refresh token, access token with a line break", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.Tokens.RefreshToken, e.oauth.Tokens.AccessToken = "", "at\r\nX: y"
			return srvPrincipalA
		}, code: app.CodeProtocolError, exchange: true},
		{name: "no refresh token, access token already expired", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.Tokens.RefreshToken, e.oauth.Tokens.ExpiresAt = "", srvT0.Add(-time.Second)
			return srvPrincipalA
		}, code: app.CodeProtocolError, exchange: true},
		{name: "refresh token with a line break", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.oauth.Tokens.RefreshToken = "rt\r\nX: y"
			return srvPrincipalA
		}, code: app.CodeProtocolError, exchange: true},
		{name: "keys gone at callback", mutate: func(t *testing.T, e *env, c *registry.FinishConnect) ports.Principal {
			e.cipher.Keys = []string{"k2"}
			return srvPrincipalA
		}, code: app.CodeKeysUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newConnectEnv(t)
			clientID := "client-1"
			if tt.dcr {
				clientID = ""
			}
			s := e.codeServer(t, clientID)
			e.srv = s
			if tt.setup != nil {
				tt.setup(t, e)
			}
			eventsBefore := len(e.audit(srvTenantA))
			authURL, err := e.start(srvPrincipalA, s.ID())
			if tt.startErr != "" {
				got := srvWantCode(t, err, tt.startErr, cnDCRSecret)
				if tt.field != "" {
					if _, ok := got.Fields[tt.field]; !ok {
						t.Errorf("fields %v, want %s", got.Fields, tt.field)
					}
				}
				if n := len(e.tenants.Txs[srvTenantA].OAuthStateRepo.Rows); n != 0 {
					t.Errorf("a refused start stored %d states", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("StartConnect = %v", err)
			}
			cmd := callback(t, authURL)
			p := tt.mutate(t, e, &cmd)
			eventsBefore = len(e.audit(srvTenantA))
			_, err = e.finish(p, cmd)
			got := srvWantCode(t, err, tt.code, cnRefresh, cnAccessToken, cmd.State)
			if tt.field != "" {
				if _, ok := got.Fields[tt.field]; !ok {
					t.Errorf("fields %v, want %s", got.Fields, tt.field)
				}
			}
			if (len(e.oauth.Exchanges) > 0) != tt.exchange {
				t.Errorf("token requests %d, want any: %v", len(e.oauth.Exchanges), tt.exchange)
			}
			// Nothing stored: the server and its sealed credential are not
			// connected, and no server.connect event is written (an admin's
			// patch during the exchange writes its own server.update).
			stored := e.repos[srvTenantA].Rows[s.ID()]
			cred, cerr := app.OpenCredential(app.NewVault(e.cipher), s.ID(), e.repos[srvTenantA].Creds[s.ID()])
			if o, _ := cred.OAuth(); stored.OAuth().Connected(srvT0) || (cerr == nil && o.Connected()) {
				t.Errorf("a refused callback stored a connection")
			}
			for _, ev := range e.audit(srvTenantA)[eventsBefore:] {
				if ev.Action == registry.ActionServerConnect {
					t.Errorf("a refused callback wrote audit event %s", ev.Action)
				}
			}
			if strings.Contains(err.Error(), cnRefresh) {
				t.Errorf("error chain holds the refresh token")
			}
		})
	}
}

// confAuth is a confidential code-flow client bound to cnIssuer.
func confAuth() registry.ServerAuth {
	a := codeAuth("client-1")
	a.ClientSecret, a.Issuer = srvClientSecret, cnIssuer
	return a
}

// TestConnectBoundIssuer: a client secret goes only to the authorization
// server the admin named. An MCP server that names another is
// server_unauthorized, recorded as the server's last error, and nothing
// is stored or exchanged; a public client's first connection pins its
// issuer the same way.
func TestConnectBoundIssuer(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e *connectEnv) // after the server exists
		want  app.Code                          // "": connects
		field string
		// asked is the issuer Discover is bound to.
		asked string
	}{
		{name: "confidential client at its issuer", asked: cnIssuer},
		{name: "the MCP server names another authorization server", setup: func(t *testing.T, e *connectEnv) {
			e.oauth.Metadata.Issuer = "https://evil.example"
		}, want: app.CodeServerUnauthorized, asked: cnIssuer},
		{name: "the OAuth client refused the issuer", setup: func(t *testing.T, e *connectEnv) {
			e.oauth.DiscoverErr = ports.ErrOAuthIssuer
		}, want: app.CodeServerUnauthorized, asked: cnIssuer},
		{name: "a secret stored without issuer cannot connect", setup: func(t *testing.T, e *connectEnv) {
			legacy, err := server.UnmarshalCredentialSecret([]byte(`{"type":"oauth_authorization_code","clientId":"client-1","clientSecret":"` + srvClientSecret + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			sealed, err := app.SealCredential(app.NewVault(e.cipher), e.srv.ID(), legacy)
			if err != nil {
				t.Fatal(err)
			}
			e.repos[srvTenantA].Creds[e.srv.ID()] = sealed
		}, want: app.CodeValidationFailed, field: "auth.issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newConnectEnv(t)
			e.srv = e.create(t, srvPrincipalA, registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: confAuth(), Acknowledged: true})
			if tt.setup != nil {
				tt.setup(t, e)
			}
			authURL, err := e.start(srvPrincipalA, e.srv.ID())
			if tt.asked == "" && len(e.oauth.Issuers) != 0 {
				t.Errorf("discovered %v", e.oauth.Issuers)
			}
			if tt.asked != "" && (len(e.oauth.Issuers) != 1 || e.oauth.Issuers[0] != tt.asked) {
				t.Errorf("Discover bound to %q, want %q", e.oauth.Issuers, tt.asked)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("StartConnect = %v", err)
				}
				got, err := e.finish(srvPrincipalA, callback(t, authURL))
				if err != nil {
					t.Fatalf("FinishConnect = %v", err)
				}
				if got.OAuth().Issuer != cnIssuer || e.oauth.Exchanges[0].ClientSecret != srvClientSecret || e.oauth.Exchanges[0].TokenURL.String() != "https://as.example.com/token" {
					t.Errorf("connected %+v", got.OAuth())
				}
				return
			}
			got := srvWantCode(t, err, tt.want, srvClientSecret)
			if tt.field != "" {
				if _, ok := got.Fields[tt.field]; !ok {
					t.Errorf("fields %v, want %s", got.Fields, tt.field)
				}
			}
			if n := len(e.tenants.Txs[srvTenantA].OAuthStateRepo.Rows); n != 0 || len(e.oauth.Registered) != 0 {
				t.Errorf("a refused start stored %d states, registered %d", n, len(e.oauth.Registered))
			}
			if tt.want == app.CodeServerUnauthorized {
				stored := e.repos[srvTenantA].Rows[e.srv.ID()]
				if stored.LastError() != "server_unauthorized" || stored.OAuth().Refused != server.RefusedIssuerMismatch || !strings.Contains(got.Message, "another authorization server") {
					t.Errorf("lastError %q, refused %q, message %q", stored.LastError(), stored.OAuth().Refused, got.Message)
				}
			}
		})
	}

	// A public client without issuer: the first connection pins the
	// issuer; an MCP server that later names another is refused.
	t.Run("public client: first connection pins the issuer", func(t *testing.T) {
		e := newConnectEnv(t)
		e.srv = e.codeServer(t, "client-1")
		authURL, err := e.start(srvPrincipalA, e.srv.ID())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.finish(srvPrincipalA, callback(t, authURL)); err != nil {
			t.Fatal(err)
		}
		e.oauth.Metadata.Issuer = "https://evil.example"
		_, err = e.start(srvPrincipalA, e.srv.ID())
		srvWantCode(t, err, app.CodeServerUnauthorized)
		if len(e.oauth.Issuers) != 2 || e.oauth.Issuers[0] != "" || e.oauth.Issuers[1] != cnIssuer {
			t.Errorf("Discover bound to %q", e.oauth.Issuers)
		}
		stored := e.repos[srvTenantA].Rows[e.srv.ID()]
		if stored.Status(srvT0) != server.StatusUnauthorized || stored.OAuth().Issuer != cnIssuer || stored.OAuth().Refused != server.RefusedIssuerMismatch {
			t.Errorf("status %s, issuer %q, refused %q", stored.Status(srvT0), stored.OAuth().Issuer, stored.OAuth().Refused)
		}
		// Connecting again at the bound issuer ends the refusal.
		e.oauth.Metadata.Issuer = cnIssuer
		authURL, err = e.start(srvPrincipalA, e.srv.ID())
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.finish(srvPrincipalA, callback(t, authURL))
		if err != nil || got.OAuth().Refused != "" {
			t.Errorf("reconnect: %v, refused %q", err, got.OAuth().Refused)
		}
	})
}

func (e *connectEnv) patchAuth(t *testing.T, a registry.ServerAuth) {
	t.Helper()
	if _, err := registry.NewPatchServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.PatchServer{ID: e.srv.ID(), Auth: &a}); err != nil {
		t.Fatal(err)
	}
}

// TestFindIssuer: the register form's prefill asks the server which
// authorization server it names, behind the gates and the save-time
// address check, unbound to any issuer; nothing is stored.
func TestFindIssuer(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		setup func(e *connectEnv)
		want  app.Code // "": the issuer
		asked bool     // discovery ran
	}{
		{name: "finds the issuer", url: "https://wiki.example.com/mcp", asked: true},
		{name: "gates closed", url: "https://wiki.example.com/mcp", setup: func(e *connectEnv) { e.serverEnv.deps.Gates = app.Gates{Instance: gate.InstanceAllowed} }, want: app.CodeNotSignedOff},
		{name: "http URL", url: "http://wiki.example.com/mcp", want: app.CodeValidationFailed},
		{name: "private host", url: "https://intra.example/mcp", want: app.CodeEndpointNotPublic},
		{name: "metadata unusable", url: "https://wiki.example.com/mcp", setup: func(e *connectEnv) { e.oauth.DiscoverErr = ports.ErrOAuthMetadata }, want: app.CodeProtocolError, asked: true},
		{name: "issuer not https", url: "https://wiki.example.com/mcp", setup: func(e *connectEnv) { e.oauth.Metadata.Issuer = "http://as.example.com" }, want: app.CodeProtocolError, asked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newConnectEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			got, err := registry.NewFindIssuerHandler(e.serverEnv.deps, e.deps).Handle(context.Background(), srvPrincipalA, registry.FindIssuer{URL: tt.url})
			if tt.want == "" {
				if err != nil || got != cnIssuer {
					t.Fatalf("FindIssuer = %q, %v", got, err)
				}
			} else {
				srvWantCode(t, err, tt.want)
			}
			if (len(e.oauth.Discovered) > 0) != tt.asked || (tt.asked && e.oauth.Issuers[0] != "") {
				t.Errorf("discovered %v bound to %q, want asked=%v unbound", e.oauth.Discovered, e.oauth.Issuers, tt.asked)
			}
			if r := e.repos[srvTenantA]; r != nil && len(r.Rows) != 0 {
				t.Errorf("stored %d servers", len(r.Rows))
			}
		})
	}
}
