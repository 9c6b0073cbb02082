package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/server"
)

const (
	pcState    = "state-SECRET-0123456789abcdefghijklmnopqrstu"
	pcSession  = "session-id-hash-of-the-admin"
	pcIssuer   = "https://as.example.com"
	pcRedirect = "https://codelotse.example.com/ui/oauth/callback"
	pcVerifier = "verifier-SECRET-0123456789abcdefghijklmnopqr"
)

var pcSealed = []byte("k1|mcp_servers:…|sealed credential")

func authServer(t *testing.T) server.AuthorizationServer {
	t.Helper()
	return server.AuthorizationServer{
		Issuer:                pcIssuer,
		AuthorizationEndpoint: mustURL(t, "https://as.example.com/authorize"),
		TokenEndpoint:         mustURL(t, "https://as.example.com/token"),
		RegistrationEndpoint:  mustURL(t, "https://as.example.com/register"),
		IssParameterSupported: true,
		CodeChallengeMethods:  []string{"plain", "S256"},
	}
}

// pending starts a connection at t0 at authServer with iss announced or
// not.
func pending(t *testing.T, issRequired bool) *server.PendingConnection {
	t.Helper()
	as := authServer(t)
	as.IssParameterSupported = issRequired
	p, err := server.NewPendingConnection(pcState, pcSession, serverID, pcSealed, as, pcRedirect, t0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func callback(t *testing.T, state, code, iss, errorCode string) server.Callback {
	t.Helper()
	cb, err := server.NewCallback(state, code, iss, errorCode)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

func sha(s []byte) []byte { h := sha256.Sum256(s); return h[:] }

// connectField is the field a field error names ("" for another error).
func connectField(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// TestPendingConnectionFinish: the callback is judged against the pending
// connection: its state, the session that started it, before its expiry,
// without an authorization error, with the expected iss (RFC 9207) and a
// code. The order is the one the refusals are answered in.
func TestPendingConnectionFinish(t *testing.T) {
	tests := []struct {
		name        string
		issRequired bool
		state       string // "": pcState
		session     string
		at          time.Time
		code, iss   string
		errorCode   string
		want        error
		denied      string // the code an AuthorizationDenied repeats
	}{
		{name: "the callback of its session, in time", issRequired: true, session: pcSession, at: t0, code: "code-1", iss: pcIssuer},
		{name: "one nanosecond before the expiry", issRequired: true, session: pcSession, at: t0.Add(server.ConnectTTL - 1), code: "code-1", iss: pcIssuer},
		{name: "without iss when not announced", session: pcSession, at: t0, code: "code-1"},

		{name: "another state", issRequired: true, state: "another-state", session: pcSession, at: t0, code: "code-1", iss: pcIssuer, want: server.ErrStateMismatch},
		{name: "the state with a suffix", issRequired: true, state: pcState + "x", session: pcSession, at: t0, code: "code-1", iss: pcIssuer, want: server.ErrStateMismatch},
		{name: "the state's hash instead of the state", issRequired: true, state: string(sha([]byte(pcState))), session: pcSession, at: t0, code: "code-1", iss: pcIssuer, want: server.ErrStateMismatch},
		{name: "another state, session and time: the state first", issRequired: true, state: "another-state", session: "other", at: t0.Add(time.Hour), iss: "https://evil.example", want: server.ErrStateMismatch},
		{name: "another session", issRequired: true, session: "the-attackers-session", at: t0, code: "code-1", iss: pcIssuer, want: server.ErrOtherSession},
		{name: "no session", issRequired: true, session: "", at: t0, code: "code-1", iss: pcIssuer, want: server.ErrOtherSession},
		{name: "the session's hash instead of the session", issRequired: true, session: string(sha([]byte(pcSession))), at: t0, code: "code-1", iss: pcIssuer, want: server.ErrOtherSession},
		{name: "the session with a suffix", issRequired: true, session: pcSession + "x", at: t0, code: "code-1", iss: pcIssuer, want: server.ErrOtherSession},
		{name: "at the expiry", issRequired: true, session: pcSession, at: t0.Add(server.ConnectTTL), code: "code-1", iss: pcIssuer, want: server.ErrConnectionExpired},
		{name: "a day later", issRequired: true, session: pcSession, at: t0.Add(24 * time.Hour), code: "code-1", iss: pcIssuer, want: server.ErrConnectionExpired},
		{name: "another session and expired: the session first", issRequired: true, session: "other", at: t0.Add(time.Hour), code: "code-1", iss: pcIssuer, want: server.ErrOtherSession},
		{name: "authorization error", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, errorCode: "access_denied", want: server.ErrAuthorizationDenied, denied: "access_denied"},
		{name: "authorization error with markup is not repeated", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, errorCode: "<b>call +1 555</b>", want: server.ErrAuthorizationDenied},
		{name: "authorization error in capitals is not repeated", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, errorCode: "ACCESS_DENIED", want: server.ErrAuthorizationDenied},
		{name: "authorization error of 65 letters is not repeated", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, errorCode: strings.Repeat("a", 65), want: server.ErrAuthorizationDenied},
		{name: "authorization error of 64 letters is repeated", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, errorCode: strings.Repeat("a", 64), want: server.ErrAuthorizationDenied, denied: strings.Repeat("a", 64)},
		{name: "authorization error with a code", issRequired: true, session: pcSession, at: t0, code: "code-1", iss: pcIssuer, errorCode: "server_error", want: server.ErrAuthorizationDenied, denied: "server_error"},
		{name: "iss missing though announced", issRequired: true, session: pcSession, at: t0, code: "code-1", want: server.ErrIssRequired},
		{name: "another iss", issRequired: true, session: pcSession, at: t0, code: "code-1", iss: "https://evil.example", want: server.ErrIssMismatch},
		{name: "another iss though not announced", session: pcSession, at: t0, code: "code-1", iss: "https://evil.example", want: server.ErrIssMismatch},
		{name: "the issuer with a trailing slash", issRequired: true, session: pcSession, at: t0, code: "code-1", iss: pcIssuer + "/", want: server.ErrIssMismatch},
		{name: "the issuer in capitals", issRequired: true, session: pcSession, at: t0, code: "code-1", iss: "https://AS.example.com", want: server.ErrIssMismatch},
		{name: "no code", issRequired: true, session: pcSession, at: t0, iss: pcIssuer, want: server.ErrCodeRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pending(t, tt.issRequired)
			state := tt.state
			if state == "" {
				state = pcState
			}
			err := p.Finish(tt.at, tt.session, callback(t, state, tt.code, tt.iss, tt.errorCode))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Finish = %v, want %v", err, tt.want)
			}
			var d *server.AuthorizationDenied
			if errors.As(err, &d) && d.Code != tt.denied {
				t.Errorf("denied code %q, want %q", d.Code, tt.denied)
			}
			if err != nil && strings.Contains(err.Error(), tt.errorCode) && tt.errorCode != "" {
				t.Errorf("the error %q repeats the authorization server's text", err)
			}
			// Used once, whatever the answer: a replay is refused.
			if err := p.Finish(tt.at, tt.session, callback(t, state, tt.code, tt.iss, tt.errorCode)); !errors.Is(err, server.ErrConnectionUsed) {
				t.Errorf("second Finish = %v, want ErrConnectionUsed", err)
			}
		})
	}
}

// TestFinishIsSingleUse: a refused callback uses the connection up too, so
// the right callback after a wrong one is refused.
func TestFinishIsSingleUse(t *testing.T) {
	p := pending(t, true)
	if err := p.Finish(t0, "the-attackers-session", callback(t, pcState, "code-1", pcIssuer, "")); !errors.Is(err, server.ErrOtherSession) {
		t.Fatalf("first Finish = %v", err)
	}
	if err := p.Finish(t0, pcSession, callback(t, pcState, "code-1", pcIssuer, "")); !errors.Is(err, server.ErrConnectionUsed) {
		t.Errorf("the right callback after a wrong one = %v, want ErrConnectionUsed", err)
	}
	// A connection loaded again from its row is fresh only if the store
	// gave it back: the store's Take deletes it (ports.OAuthStateRepo).
	// Refused for another state, it is used up as well.
	r := pending(t, true)
	if err := r.Finish(t0, pcSession, callback(t, "another-state", "code-1", pcIssuer, "")); !errors.Is(err, server.ErrStateMismatch) {
		t.Fatalf("Finish with another state = %v", err)
	}
	if err := r.Finish(t0, pcSession, callback(t, pcState, "code-1", pcIssuer, "")); !errors.Is(err, server.ErrConnectionUsed) {
		t.Errorf("the right callback after another state's = %v, want ErrConnectionUsed", err)
	}
	q := reload(t, pending(t, true))
	if err := q.Finish(t0, pcSession, callback(t, pcState, "code-1", pcIssuer, "")); err != nil {
		t.Fatalf("loaded Finish = %v", err)
	}
	if err := q.Finish(t0, pcSession, callback(t, pcState, "code-1", pcIssuer, "")); !errors.Is(err, server.ErrConnectionUsed) {
		t.Errorf("loaded second Finish = %v, want ErrConnectionUsed", err)
	}
}

// TestNewCallback: parameters are bounded before the state is looked up,
// and a state is required.
func TestNewCallback(t *testing.T) {
	long := strings.Repeat("a", server.MaxCallbackParamLen+1)
	max := strings.Repeat("a", server.MaxCallbackParamLen)
	tests := []struct {
		name                       string
		state, code, iss, errorStr string
		want                       error
	}{
		{name: "state and code", state: "s", code: "c", iss: pcIssuer},
		{name: "every parameter at the limit", state: max, code: max, iss: max, errorStr: max},
		{name: "long state", state: long, code: "c", want: server.ErrCallbackTooLong},
		{name: "long code", state: "s", code: long, want: server.ErrCallbackTooLong},
		{name: "long iss", state: "s", code: "c", iss: long, want: server.ErrCallbackTooLong},
		{name: "long error", state: "s", errorStr: long, want: server.ErrCallbackTooLong},
		{name: "long code without state", code: long, want: server.ErrCallbackTooLong},
		{name: "no state", code: "c", want: server.ErrStateRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := server.NewCallback(tt.state, tt.code, tt.iss, tt.errorStr)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("NewCallback = %v, want %v", err, tt.want)
			}
			if err == nil && (!bytes.Equal(cb.StateHash(), sha([]byte(tt.state))) || cb.Code() != tt.code) {
				t.Errorf("state hash %x, code %q", cb.StateHash(), cb.Code())
			}
		})
	}
}

// TestNewPendingConnection: what a started connection keeps (hashes, never
// the state, the session or the credential), its expiry, and the parts it
// cannot start without.
func TestNewPendingConnection(t *testing.T) {
	p := pending(t, true)
	if !bytes.Equal(p.StateHash(), sha([]byte(pcState))) || !bytes.Equal(p.SessionHash(), sha([]byte(pcSession))) || !bytes.Equal(p.CredentialHash(), sha(pcSealed)) ||
		p.ServerID() != serverID || p.Issuer() != pcIssuer || p.AuthorizationEndpoint().String() != "https://as.example.com/authorize" ||
		p.TokenEndpoint().String() != "https://as.example.com/token" || !p.IssRequired() || p.RedirectURI() != pcRedirect ||
		!p.CreatedAt().Equal(t0) || !p.ExpiresAt().Equal(t0.Add(10*time.Minute)) {
		t.Errorf("pending connection %+v", p)
	}
	if s := fmt.Sprintf("%+v %#v", p, p); strings.Contains(s, pcState) || strings.Contains(s, pcSession) || strings.Contains(s, string(pcSealed)) {
		t.Errorf("the pending connection keeps a secret in clear: %s", s)
	}
	// Accessors hand out copies.
	p.StateHash()[0] ^= 0xff
	if !bytes.Equal(p.StateHash(), sha([]byte(pcState))) {
		t.Error("StateHash shares its bytes")
	}

	type args struct {
		state, session, id, redirect string
		sealed                       []byte
		as                           server.AuthorizationServer
		now                          time.Time
	}
	tests := []struct {
		name string
		edit func(a *args)
	}{
		{"no state", func(a *args) { a.state = "" }},
		{"no session", func(a *args) { a.session = "" }},
		{"no redirect URI", func(a *args) { a.redirect = "" }},
		{"no sealed credential", func(a *args) { a.sealed = nil }},
		{"no time", func(a *args) { a.now = time.Time{} }},
		{"a server id that is not a UUID", func(a *args) { a.id = "../servers/1" }},
		{"no issuer", func(a *args) { a.as.Issuer = "" }},
		{"no authorization endpoint", func(a *args) { a.as.AuthorizationEndpoint = server.URL{} }},
		{"no token endpoint", func(a *args) { a.as.TokenEndpoint = server.URL{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := args{state: pcState, session: pcSession, id: serverID, redirect: pcRedirect, sealed: pcSealed, as: authServer(t), now: t0}
			tt.edit(&a)
			if _, err := server.NewPendingConnection(a.state, a.session, a.id, a.sealed, a.as, a.redirect, a.now); !errors.Is(err, server.ErrPendingConnectionMalformed) {
				t.Errorf("NewPendingConnection = %v, want ErrPendingConnectionMalformed", err)
			}
		})
	}
}

// reload is p through its stored form.
func reload(t *testing.T, p *server.PendingConnection) *server.PendingConnection {
	t.Helper()
	q, err := server.UnmarshalPendingConnectionFromDatabase(p.StateHash(), p.ServerID(), p.SessionHash(), p.CredentialHash(),
		p.Issuer(), p.AuthorizationEndpoint().String(), p.TokenEndpoint().String(), p.IssRequired(), p.RedirectURI(), p.CreatedAt(), p.ExpiresAt())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestUnmarshalPendingConnectionFromDatabase: a stored row loads as it was
// stored, and a row that breaks an invariant (tampered, truncated, or
// with an endpoint today's URL rules refuse) never becomes a connection.
func TestUnmarshalPendingConnectionFromDatabase(t *testing.T) {
	p := pending(t, true)
	q := reload(t, p)
	if fmt.Sprint(p) != fmt.Sprint(q) {
		t.Errorf("loaded %+v, stored %+v", q, p)
	}

	type row struct {
		state, session, cred []byte
		id, issuer, authz    string
		token, redirect      string
		created, expires     time.Time
	}
	good := func() row {
		return row{p.StateHash(), p.SessionHash(), p.CredentialHash(), serverID, pcIssuer, "https://as.example.com/authorize", "https://as.example.com/token", pcRedirect, t0, t0.Add(server.ConnectTTL)}
	}
	tests := []struct {
		name   string
		tamper func(r *row)
	}{
		{"short state hash", func(r *row) { r.state = r.state[:31] }},
		{"no state hash", func(r *row) { r.state = nil }},
		{"short session hash", func(r *row) { r.session = r.session[:16] }},
		{"the session in clear", func(r *row) { r.session = []byte(pcSession) }},
		{"no credential hash", func(r *row) { r.cred = nil }},
		{"server id not a UUID", func(r *row) { r.id = "1 OR 1=1" }},
		{"no issuer", func(r *row) { r.issuer = "" }},
		{"no authorization endpoint", func(r *row) { r.authz = "" }},
		{"authorization endpoint over http", func(r *row) { r.authz = "http://as.example.com/authorize" }},
		{"token endpoint with user info", func(r *row) { r.token = "https://user:pass@as.example.com/token" }},
		{"token endpoint not a URL", func(r *row) { r.token = "as.example.com/token" }},
		{"no redirect URI", func(r *row) { r.redirect = "" }},
		{"expiry at the start", func(r *row) { r.expires = r.created }},
		{"no times", func(r *row) { r.created, r.expires = time.Time{}, time.Time{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.tamper(&r)
			_, err := server.UnmarshalPendingConnectionFromDatabase(r.state, r.id, r.session, r.cred, r.issuer, r.authz, r.token, true, r.redirect, r.created, r.expires)
			if !errors.Is(err, server.ErrPendingConnectionMalformed) {
				t.Errorf("loaded a tampered row: %v", err)
			}
		})
	}
	t.Run("keeps no caller's bytes", func(t *testing.T) {
		r := good()
		q, err := server.UnmarshalPendingConnectionFromDatabase(r.state, r.id, r.session, r.cred, r.issuer, r.authz, r.token, true, r.redirect, r.created, r.expires)
		if err != nil {
			t.Fatal(err)
		}
		r.session[0] ^= 0xff
		if err := q.Finish(t0, pcSession, callback(t, pcState, "c", pcIssuer, "")); err != nil {
			t.Errorf("the row's bytes changed the loaded connection: %v", err)
		}
	})
}

// TestAuthorizationServerCheckFor: a connection goes only to the issuer
// the credential is bound to, with complete metadata and PKCE S256.
func TestAuthorizationServerCheckFor(t *testing.T) {
	tests := []struct {
		name  string
		bound string
		edit  func(a *server.AuthorizationServer)
		want  error
	}{
		{name: "the bound issuer", bound: pcIssuer},
		{name: "no issuer bound yet: any", bound: "", edit: func(a *server.AuthorizationServer) { a.Issuer = "https://other.example" }},
		{name: "S256 alone", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.CodeChallengeMethods = []string{"S256"} }},
		{name: "no PKCE methods listed", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.CodeChallengeMethods = nil }, want: server.ErrPKCEUnsupported},
		{name: "an empty list of PKCE methods", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.CodeChallengeMethods = []string{} }, want: server.ErrPKCEUnsupported},

		{name: "another issuer than the bound one", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.Issuer = "https://evil.example" }, want: server.ErrOtherIssuer},
		{name: "the bound issuer with a path below", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.Issuer = pcIssuer + "/tenant" }, want: server.ErrOtherIssuer},
		{name: "the bound issuer with a trailing slash", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.Issuer = pcIssuer + "/" }, want: server.ErrOtherIssuer},
		{name: "no issuer though one is bound", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.Issuer = "" }, want: server.ErrOtherIssuer},
		{name: "another issuer and no endpoints: the issuer first", bound: pcIssuer, edit: func(a *server.AuthorizationServer) {
			a.Issuer, a.TokenEndpoint = "https://evil.example", server.URL{}
		}, want: server.ErrOtherIssuer},
		{name: "no issuer, none bound", edit: func(a *server.AuthorizationServer) { a.Issuer = "" }, want: server.ErrMetadataIncomplete},
		{name: "no authorization endpoint", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.AuthorizationEndpoint = server.URL{} }, want: server.ErrMetadataIncomplete},
		{name: "no token endpoint", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.TokenEndpoint = server.URL{} }, want: server.ErrMetadataIncomplete},
		{name: "plain only", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.CodeChallengeMethods = []string{"plain"} }, want: server.ErrPKCEUnsupported},
		{name: "s256 in lower case", bound: pcIssuer, edit: func(a *server.AuthorizationServer) { a.CodeChallengeMethods = []string{"s256"} }, want: server.ErrPKCEUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authServer(t)
			if tt.edit != nil {
				tt.edit(&a)
			}
			if err := a.CheckFor(tt.bound); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("CheckFor(%q) = %v, want %v", tt.bound, err, tt.want)
			}
		})
	}
}

// TestCheckRegistration: dynamic client registration only at an issuer
// the operator listed, compared exactly, and only with an endpoint.
func TestCheckRegistration(t *testing.T) {
	tests := []struct {
		name   string
		issuer string
		listed []string
		noEnd  bool
		want   error
	}{
		{name: "listed", issuer: pcIssuer, listed: []string{"https://other.example", pcIssuer}},
		{name: "nothing listed", issuer: pcIssuer, want: server.ErrRegistrationNotAllowed},
		{name: "a longer host", issuer: "https://as.example.com.evil.test", listed: []string{pcIssuer}, want: server.ErrRegistrationNotAllowed},
		{name: "a path below", issuer: pcIssuer + "/other", listed: []string{pcIssuer}, want: server.ErrRegistrationNotAllowed},
		{name: "a shorter host", issuer: "https://as.example.co", listed: []string{pcIssuer}, want: server.ErrRegistrationNotAllowed},
		{name: "listed with a trailing slash", issuer: pcIssuer, listed: []string{pcIssuer + "/"}, want: server.ErrRegistrationNotAllowed},
		{name: "an empty issuer", issuer: "", listed: []string{pcIssuer}, want: server.ErrRegistrationNotAllowed},
		{name: "listed, no registration endpoint", issuer: pcIssuer, listed: []string{pcIssuer}, noEnd: true, want: server.ErrNoRegistrationEndpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authServer(t)
			a.Issuer = tt.issuer
			if tt.noEnd {
				a.RegistrationEndpoint = server.URL{}
			}
			if err := a.CheckRegistration(tt.listed); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("CheckRegistration = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestAuthorizationURL: the admin goes to the pinned authorization
// endpoint with the pinned redirect URI, the client, the S256 challenge of
// the verifier, the state and the resource; only this connection's state
// builds it.
func TestAuthorizationURL(t *testing.T) {
	secret, err := server.NewConnectSecret(pcVerifier, "client-1")
	if err != nil {
		t.Fatal(err)
	}
	resource := mustURL(t, "https://wiki.example.com/mcp")
	for name, p := range map[string]*server.PendingConnection{"started": pending(t, true), "loaded": reload(t, pending(t, true))} {
		t.Run(name, func(t *testing.T) {
			got, err := p.AuthorizationURL(pcState, secret, []string{"mcp:read", "offline_access"}, resource)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(got)
			q := u.Query()
			challenge := sha256.Sum256([]byte(pcVerifier))
			if u.Scheme+"://"+u.Host+u.Path != "https://as.example.com/authorize" || len(q) != 8 || q.Get("response_type") != "code" || q.Get("client_id") != "client-1" ||
				q.Get("redirect_uri") != pcRedirect || q.Get("scope") != "mcp:read offline_access" || q.Get("state") != pcState ||
				q.Get("code_challenge") != base64.RawURLEncoding.EncodeToString(challenge[:]) || q.Get("code_challenge_method") != "S256" ||
				q.Get("resource") != "https://wiki.example.com/mcp" || strings.Contains(got, pcVerifier) {
				t.Errorf("authorization URL %s", got)
			}
			if got, _ := p.AuthorizationURL(pcState, secret, nil, resource); strings.Contains(got, "scope=") {
				t.Errorf("no scopes: %s", got)
			}
		})
	}
	p := pending(t, true)
	for name, call := range map[string]func() (string, error){
		"another state": func() (string, error) { return p.AuthorizationURL("another-state", secret, nil, resource) },
		"no verifier": func() (string, error) {
			return p.AuthorizationURL(pcState, server.ConnectSecret{ClientID: "client-1"}, nil, resource)
		},
		"no client": func() (string, error) {
			return p.AuthorizationURL(pcState, server.ConnectSecret{Verifier: pcVerifier}, nil, resource)
		},
		"no resource":    func() (string, error) { return p.AuthorizationURL(pcState, secret, nil, server.URL{}) },
		"an empty state": func() (string, error) { return p.AuthorizationURL("", secret, nil, resource) },
	} {
		if got, err := call(); !errors.Is(err, server.ErrPendingConnectionMalformed) || got != "" {
			t.Errorf("%s: %q, %v; want ErrPendingConnectionMalformed", name, got, err)
		}
	}
}

// codeServer is a code-flow server with cred.
func codeServer(t *testing.T, cred server.Credential) *server.Server {
	t.Helper()
	s, err := server.NewServer(serverID, tenantID, mustName(t, "wiki"), mustURL(t, "https://wiki.example.com/mcp"), cred, true, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPendingConnectionCheckCredential: the callback goes on only over the
// very ciphertext the start saw, of a server still of the code flow.
func TestPendingConnectionCheckCredential(t *testing.T) {
	p := pending(t, true)
	code := codeServer(t, mustIssuerCode(t, "client-1", ""))
	bearer, _ := server.NewBearer("tok-1234567890")
	tampered := bytes.Clone(pcSealed)
	tampered[len(tampered)-1] ^= 1
	tests := []struct {
		name   string
		s      *server.Server
		sealed []byte
		want   error
	}{
		{"unchanged", code, pcSealed, nil},
		{"one bit changed", code, tampered, server.ErrConnectionCredentialChanged},
		{"resealed (same plaintext, new ciphertext)", code, append(bytes.Clone(pcSealed), ' '), server.ErrConnectionCredentialChanged},
		{"no credential any more", code, nil, server.ErrConnectionCredentialChanged},
		{"the hash instead of the ciphertext", code, sha(pcSealed), server.ErrConnectionCredentialChanged},
		{"a server of another kind", codeServer(t, bearer), pcSealed, server.ErrConnectionCredentialChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := p.CheckCredential(tt.s, tt.sealed); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("CheckCredential = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestPendingConnectionClient: the code is exchanged for the client the
// start pinned, which the credential must still name: the admin's
// (unchanged) or the one registered at the start, kept with the
// credential before the connection was stored.
func TestPendingConnectionClient(t *testing.T) {
	p := pending(t, true)
	pinned := func(clientID string) server.ConnectSecret {
		return server.ConnectSecret{Verifier: pcVerifier, ClientID: clientID}
	}
	registered, err := mustIssuerCode(t, "", "").WithRegisteredClient("dcr-1", "dcr-secret-1", pcIssuer, "")
	if err != nil {
		t.Fatal(err)
	}
	bearer, _ := server.NewBearer("tok-1234567890")
	tests := []struct {
		name   string
		cred   server.Credential
		secret server.ConnectSecret
		want   error
	}{
		{name: "the admin's client", cred: mustIssuerCode(t, "client-1", pcIssuer), secret: pinned("client-1")},
		{name: "the admin's client, no issuer bound yet", cred: mustIssuerCode(t, "client-1", ""), secret: pinned("client-1")},
		{name: "the registered client kept with the credential", cred: registered, secret: pinned("dcr-1")},
		{name: "another client than the pinned one", cred: mustIssuerCode(t, "client-2", pcIssuer), secret: pinned("client-1"), want: server.ErrConnectionCredentialChanged},
		{name: "another registered client than the pinned one", cred: registered, secret: pinned("dcr-2"), want: server.ErrConnectionCredentialChanged},
		// A state stored before a start kept its registration with the
		// credential: it is not registered now.
		{name: "a credential without a client id", cred: mustIssuerCode(t, "", ""), secret: pinned("dcr-1"), want: server.ErrConnectionCredentialChanged},
		{name: "neither names a client", cred: mustIssuerCode(t, "", ""), secret: pinned(""), want: server.ErrConnectionCredentialChanged},
		{name: "not an OAuth credential", cred: bearer, secret: pinned("client-1"), want: server.ErrConnectionCredentialChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Client(tt.cred, tt.secret)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Client = %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			// The credential itself, unchanged: its client and its secret.
			gotSecret, _ := got.MarshalSecret()
			wantSecret, _ := tt.cred.MarshalSecret()
			if o, _ := got.OAuth(); o.ClientID != tt.secret.ClientID || !bytes.Equal(gotSecret, wantSecret) {
				t.Errorf("client %q, want the credential as it was", o.ClientID)
			}
		})
	}
}

// TestPendingConnectionConnection: the connection is made at the expected
// issuer and the pinned token endpoint, never at others.
func TestPendingConnectionConnection(t *testing.T) {
	p := pending(t, true)
	tests := []struct {
		name    string
		cred    server.Credential
		tokens  server.Tokens
		field   string
		expires time.Time // zero: a refresh token
	}{
		{name: "refresh token", cred: mustIssuerCode(t, "client-1", ""), tokens: server.Tokens{AccessToken: "at-1", RefreshToken: "rt-1", ExpiresAt: t0.Add(time.Hour)}},
		{name: "access token with its expiry", cred: mustIssuerCode(t, "client-1", ""), tokens: server.Tokens{AccessToken: "at-1", ExpiresAt: t0.Add(20 * time.Minute)}, expires: t0.Add(20 * time.Minute)},
		{name: "access token without expiry", cred: mustIssuerCode(t, "client-1", ""), tokens: server.Tokens{AccessToken: "at-1"}, expires: t0.Add(server.AccessOnlyLifetime)},
		{name: "access token already expired", cred: mustIssuerCode(t, "client-1", ""), tokens: server.Tokens{AccessToken: "at-1", ExpiresAt: t0.Add(-time.Second)}, field: "auth.accessExpiresAt"},
		{name: "neither token", cred: mustIssuerCode(t, "client-1", ""), field: "auth.accessToken"},
		{name: "a refresh token with a line break", cred: mustIssuerCode(t, "client-1", ""), tokens: server.Tokens{RefreshToken: "rt\r\nX: y"}, field: "auth.refreshToken"},
		{name: "a credential bound to another issuer", cred: mustIssuerCode(t, "client-1", "https://other.example"), tokens: server.Tokens{RefreshToken: "rt-1"}, field: "auth.issuer"},
		{name: "connected before at another token endpoint: the pinned one now", cred: func() server.Credential {
			c, err := mustIssuerCode(t, "client-1", pcIssuer).WithConnection(pcIssuer, mustURL(t, "https://as.example.com/old-token"), "rt-old", "token:old", t0.Add(-time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}(), tokens: server.Tokens{RefreshToken: "rt-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Connection(tt.cred, tt.tokens, "token:t", t0)
			if tt.field != "" {
				if connectField(err) != tt.field {
					t.Fatalf("Connection = %v, want a field error on %s", err, tt.field)
				}
				for _, tok := range []string{tt.tokens.AccessToken, tt.tokens.RefreshToken} {
					if tok != "" && strings.Contains(err.Error(), tok) {
						t.Errorf("the error repeats a token: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o, _ := got.OAuth()
			if o.Issuer != pcIssuer || o.TokenURL.String() != "https://as.example.com/token" || o.ConnectedBy != "token:t" || !o.ConnectedAt.Equal(t0) ||
				!o.AccessExpiresAt.Equal(tt.expires) || (tt.expires.IsZero() != (o.RefreshToken == "rt-1")) {
				t.Errorf("connected %+v", got.View())
			}
		})
	}
}

// TestConnectSecret: the sealed plaintext's format is pinned (stored
// states depend on it), the verifier and client are required, and no
// formatting shows a secret.
func TestConnectSecret(t *testing.T) {
	for _, tt := range []struct {
		secret server.ConnectSecret
		json   string
	}{
		{server.ConnectSecret{Verifier: "v-1", ClientID: "c-1"}, `{"verifier":"v-1","clientId":"c-1"}`},
	} {
		got, err := tt.secret.MarshalSecret()
		if err != nil || string(got) != tt.json {
			t.Errorf("MarshalSecret = %s, %v; want %s", got, err, tt.json)
		}
		back, err := server.UnmarshalConnectSecret([]byte(tt.json))
		if err != nil || back != tt.secret {
			t.Errorf("UnmarshalConnectSecret(%s) = %v, %v", tt.json, back, err)
		}
	}
	// A state sealed before the registration was kept with the credential
	// carried the registered client's secret: it is ignored.
	if back, err := server.UnmarshalConnectSecret([]byte(`{"verifier":"v-1","clientId":"c-1","clientSecret":"s-1"}`)); err != nil || back != (server.ConnectSecret{Verifier: "v-1", ClientID: "c-1"}) {
		t.Errorf("UnmarshalConnectSecret with a clientSecret = %v, %v; want it ignored", back, err)
	}
	for _, raw := range []string{`{"clientId":"c-1"}`, `{"clientId":"c-1","clientSecret":"s-1"}`, `{"verifier":"v-1"}`, `{"verifier":"","clientId":"c-1"}`, `not json`, ``, `null`, `[]`} {
		if _, err := server.UnmarshalConnectSecret([]byte(raw)); !errors.Is(err, server.ErrPendingConnectionMalformed) {
			t.Errorf("UnmarshalConnectSecret(%q) = %v, want ErrPendingConnectionMalformed", raw, err)
		}
	}
	for _, c := range [][2]string{{"", "c-1"}, {"v-1", ""}} {
		if _, err := server.NewConnectSecret(c[0], c[1]); !errors.Is(err, server.ErrPendingConnectionMalformed) {
			t.Errorf("NewConnectSecret(%q, %q) = %v", c[0], c[1], err)
		}
		if _, err := (server.ConnectSecret{Verifier: c[0], ClientID: c[1]}).MarshalSecret(); !errors.Is(err, server.ErrPendingConnectionMalformed) {
			t.Errorf("MarshalSecret(%q, %q) = %v", c[0], c[1], err)
		}
	}
	s := server.ConnectSecret{Verifier: pcVerifier, ClientID: "client-1"}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(f, s); strings.Contains(out, "SECRET") || !strings.Contains(out, "client-1") {
			t.Errorf("%s shows %q", f, out)
		}
	}
}

// TestConnectable: only a code-flow server connects, and a client secret
// only once bound to an issuer.
func TestConnectable(t *testing.T) {
	bearer, _ := server.NewBearer("tok-1234567890")
	legacy, err := server.UnmarshalCredentialSecret([]byte(`{"type":"oauth_authorization_code","clientId":"client-1","clientSecret":"cs-123456789"}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cred  server.Credential
		field string // of CheckConnectable, then of ConnectingOAuth
	}{
		{name: "public code-flow client", cred: mustIssuerCode(t, "client-1", "")},
		{name: "code-flow client without client id", cred: mustIssuerCode(t, "", "")},
		{name: "confidential client bound to its issuer", cred: func() server.Credential {
			c, err := server.NewOAuthAuthorizationCode("client-1", "cs-123456789", pcIssuer, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			return c
		}()},
		{name: "a secret stored without issuer", cred: legacy, field: "auth.issuer"},
		{name: "client credentials", cred: mustCC(t), field: "auth.type"},
		{name: "bearer", cred: bearer, field: "auth.type"},
		{name: "none", cred: server.NoCredential(), field: "auth.type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := codeServer(t, tt.cred)
			err := s.CheckConnectable()
			if err == nil {
				_, err = tt.cred.ConnectingOAuth()
			}
			if connectField(err) != tt.field || (tt.field == "") != (err == nil) {
				t.Errorf("= %v, want a field error on %q", err, tt.field)
			}
			// The opened credential is judged on its own too.
			if _, err := tt.cred.ConnectingOAuth(); tt.field == "auth.type" && connectField(err) != "auth.type" {
				t.Errorf("ConnectingOAuth = %v, want auth.type", err)
			}
		})
	}
}
