package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	uid "github.com/codelotse/codelotse/domain/id"
)

// The code-flow connection of an oauth_authorization_code server (the
// web interface's "Connect", MC13 to MC16): an admin is sent to the
// authorization server with PKCE (RFC 7636, S256) and RFC 8707's
// resource, and the authorization server's callback (RFC 6749 §4.1.2,
// with RFC 9207's iss) finishes it. In between, the connection is a
// [PendingConnection]: bound to the web session that started it, used
// once, expiring after [ConnectTTL], expecting the issuer discovery found
// and pinning that authorization server's endpoints, the redirect URI and
// the client, so the callback is judged, and the code exchanged, against
// exactly what the start used. Its secret part (the PKCE verifier and
// the pinned client id) is a [ConnectSecret], sealed by the application.
// Stored, it is loaded again only through
// [UnmarshalPendingConnectionFromDatabase] (by the adapters behind
// ports.OAuthStateRepo).

// Limits of a pending connection.
const (
	// ConnectTTL is how long a started connection waits for its callback.
	ConnectTTL = 10 * time.Minute
	// AccessOnlyLifetime is how long a connection without a refresh token
	// is taken to last when the token response named no expiry.
	AccessOnlyLifetime = time.Hour
	// MaxCallbackParamLen bounds the callback's state, code, iss and error.
	MaxCallbackParamLen = 2048
	// maxErrorCodeLen is the longest authorization error code repeated
	// to the admin ([AuthorizationDenied]).
	maxErrorCodeLen = 64
)

// Refusals of a connection's start (the authorization server discovery
// found, and dynamic client registration there).
var (
	// ErrOtherIssuer: discovery found another authorization server than
	// the issuer the credential is bound to.
	ErrOtherIssuer = errors.New("the authorization server is not the issuer the credential is bound to")
	// ErrMetadataIncomplete: the metadata names no issuer, authorization
	// endpoint or token endpoint.
	ErrMetadataIncomplete = errors.New("the authorization server's metadata lacks its issuer or an endpoint")
	// ErrPKCEUnsupported: the metadata lists no PKCE methods, or none is
	// S256.
	ErrPKCEUnsupported = errors.New("the authorization server does not support PKCE with S256")
	// ErrRegistrationNotAllowed: the operator does not allow dynamic
	// client registration at this issuer.
	ErrRegistrationNotAllowed = errors.New("dynamic client registration is not allowed at this issuer")
	// ErrNoRegistrationEndpoint: the authorization server offers no
	// dynamic client registration.
	ErrNoRegistrationEndpoint = errors.New("the authorization server offers no dynamic client registration")
)

// Refusals of a callback. Each leaves the connection unmade; an admin
// connects again.
var (
	// ErrCallbackTooLong: a callback parameter is longer than
	// [MaxCallbackParamLen].
	ErrCallbackTooLong = errors.New("the callback's parameters are too long")
	// ErrStateRequired: the callback carries no state.
	ErrStateRequired = errors.New("the callback's state is required")
	// ErrStateMismatch: the callback's state is not the one the pending
	// connection was started with (it was looked up under another key).
	ErrStateMismatch = errors.New("the callback's state is not the pending connection's")
	// ErrConnectionUsed: the pending connection was finished (or tried)
	// before: it is used once.
	ErrConnectionUsed = errors.New("the pending connection is already used")
	// ErrOtherSession: the callback arrived in another web session than
	// the one that started the connection (or in none).
	ErrOtherSession = errors.New("the pending connection belongs to another session")
	// ErrConnectionExpired: the callback came [ConnectTTL] or later after
	// the start.
	ErrConnectionExpired = errors.New("the pending connection has expired")
	// ErrAuthorizationDenied: the authorization server answered with an
	// error ([AuthorizationDenied] carries its code).
	ErrAuthorizationDenied = errors.New("the authorization server refused the connection")
	// ErrIssRequired: the authorization server announced RFC 9207's iss
	// and the callback carries none.
	ErrIssRequired = errors.New("the callback's iss is required by the authorization server's metadata")
	// ErrIssMismatch: the callback's iss is not the issuer the connection
	// started with (a mix-up, RFC 9207).
	ErrIssMismatch = errors.New("the callback's iss is not the issuer the connection started with")
	// ErrCodeRequired: the callback carries no code.
	ErrCodeRequired = errors.New("the callback's code is required")
	// ErrConnectionCredentialChanged: the server's credential (or the
	// client it names) changed since the connection started.
	ErrConnectionCredentialChanged = errors.New("the server's credential changed since the connection started")
	// ErrPendingConnectionMalformed: a pending connection or its secret
	// without one of its parts (a caller's or a stored row's fault).
	ErrPendingConnectionMalformed = errors.New("malformed pending connection")
)

// AuthorizationDenied is [ErrAuthorizationDenied] with the error code the
// authorization server sent, kept only when it is one of RFC 6749's plain
// codes (lowercase letters and underscores, at most 64): any other text
// is never repeated.
type AuthorizationDenied struct{ Code string }

func (e *AuthorizationDenied) Error() string { return ErrAuthorizationDenied.Error() }

// Unwrap makes errors.Is(err, ErrAuthorizationDenied) hold.
func (e *AuthorizationDenied) Unwrap() error { return ErrAuthorizationDenied }

// plainErrorCode returns e when it is a plain error code, else "".
func plainErrorCode(e string) string {
	if len(e) > maxErrorCodeLen {
		return ""
	}
	for i := 0; i < len(e); i++ {
		if c := e[i]; (c < 'a' || c > 'z') && c != '_' {
			return ""
		}
	}
	return e
}

// notCodeFlow is the refusal to connect a server of another kind.
func notCodeFlow() error {
	return &field.Error{Field: "auth.type", Reason: "must be oauth_authorization_code to connect"}
}

// CheckConnectable refuses to connect a server whose credential is not of
// the code flow (auth.type); it needs no key, so it comes before the
// credential is opened.
func (s *Server) CheckConnectable() error {
	if s.credKind != KindOAuthAuthorizationCode {
		return notCodeFlow()
	}
	return nil
}

// ConnectingOAuth returns the OAuth part a connection of the credential
// starts from: only a code-flow credential connects (auth.type), and one
// with a client secret only once it is bound to an issuer (auth.issuer:
// the secret goes to no other authorization server).
func (c Credential) ConnectingOAuth() (OAuth, error) {
	o, ok := c.OAuth()
	if !ok || c.kind != KindOAuthAuthorizationCode {
		return OAuth{}, notCodeFlow()
	}
	if o.NeedsIssuer() {
		return OAuth{}, &field.Error{Field: "auth.issuer", Reason: "is required with a client secret: edit the authentication and name the authorization server's issuer"}
	}
	return o, nil
}

// AuthorizationServer is what discovery found of the authorization server
// a connection goes to (RFC 8414 metadata; the OAuth client has checked
// the issuer against the URL it was fetched from).
type AuthorizationServer struct {
	Issuer                string
	AuthorizationEndpoint URL
	TokenEndpoint         URL
	// RegistrationEndpoint is zero without dynamic client registration.
	RegistrationEndpoint URL
	// IssParameterSupported: the callback must carry RFC 9207's iss.
	IssParameterSupported bool
	// CodeChallengeMethods are the metadata's
	// code_challenge_methods_supported; S256 must be among them (the MCP
	// authorization spec: a client refuses an authorization server whose
	// metadata lacks the list, or S256 in it).
	CodeChallengeMethods []string
	// TokenEndpointAuthMethods are the metadata's
	// token_endpoint_auth_methods_supported (nil when absent: RFC 8414's
	// default, client_secret_basic).
	TokenEndpointAuthMethods []string
	// ClientIDMetadataDocuments: the metadata's
	// client_id_metadata_document_supported.
	ClientIDMetadataDocuments bool
}

// complete reports whether the metadata names the issuer and both
// endpoints a connection uses.
func (a AuthorizationServer) complete() bool {
	return a.Issuer != "" && !a.AuthorizationEndpoint.IsZero() && !a.TokenEndpoint.IsZero()
}

// CheckFor checks the authorization server for a connection of a
// credential bound to boundIssuer ("" when none is bound yet): the bound
// issuer's and nobody else's ([ErrOtherIssuer]), complete metadata
// ([ErrMetadataIncomplete]), PKCE with S256 announced
// ([ErrPKCEUnsupported]: the list absent or empty, or without S256).
func (a AuthorizationServer) CheckFor(boundIssuer string) error {
	if boundIssuer != "" && a.Issuer != boundIssuer {
		return ErrOtherIssuer
	}
	if !a.complete() {
		return ErrMetadataIncomplete
	}
	// The MCP authorization spec: a metadata document that lists no
	// methods is refused too.
	if len(a.CodeChallengeMethods) == 0 {
		return ErrPKCEUnsupported
	}
	if len(a.CodeChallengeMethods) > 0 && !slices.Contains(a.CodeChallengeMethods, "S256") {
		return ErrPKCEUnsupported
	}
	return nil
}

// CheckRegistration allows dynamic client registration (RFC 7591) only
// at an issuer the operator listed, compared exactly
// ([ErrRegistrationNotAllowed]), and only where the metadata names a
// registration endpoint ([ErrNoRegistrationEndpoint]).
func (a AuthorizationServer) CheckRegistration(listed []string) error {
	if !slices.Contains(listed, a.Issuer) {
		return ErrRegistrationNotAllowed
	}
	if a.RegistrationEndpoint.IsZero() {
		return ErrNoRegistrationEndpoint
	}
	return nil
}

// ConnectSecret is the secret part of a pending connection, which the
// application seals under the state's associated data: the PKCE verifier
// and the id of the client the code is exchanged for (the credential's,
// a registered client's included: the start keeps a registration with
// the credential before it stores the connection). Its String and
// GoString never show the verifier.
type ConnectSecret struct {
	Verifier string
	ClientID string
}

// connectSecretJSON is the sealed plaintext; stored states depend on its
// field names. A clientSecret, which states sealed before a registration
// was kept with the credential carried, is ignored when one is opened.
type connectSecretJSON struct {
	Verifier string `json:"verifier"`
	ClientID string `json:"clientId"`
}

// NewConnectSecret builds the secret of a starting connection: the
// verifier and the client id are required.
func NewConnectSecret(verifier, clientID string) (ConnectSecret, error) {
	c := ConnectSecret{Verifier: verifier, ClientID: clientID}
	if err := c.check(); err != nil {
		return ConnectSecret{}, err
	}
	return c, nil
}

func (c ConnectSecret) check() error {
	if c.Verifier == "" || c.ClientID == "" {
		return ErrPendingConnectionMalformed
	}
	return nil
}

// MarshalSecret returns the secret as JSON for the cipher to seal; the
// result must never be stored or logged unsealed.
func (c ConnectSecret) MarshalSecret() ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return json.Marshal(connectSecretJSON(c))
}

// UnmarshalConnectSecret rebuilds the secret from its opened JSON; one
// without its verifier or client id is malformed.
func UnmarshalConnectSecret(b []byte) (ConnectSecret, error) {
	var j connectSecretJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return ConnectSecret{}, ErrPendingConnectionMalformed
	}
	c := ConnectSecret(j)
	if err := c.check(); err != nil {
		return ConnectSecret{}, err
	}
	return c, nil
}

// String shows the client id, never the verifier.
func (c ConnectSecret) String() string { return "connect secret(" + c.ClientID + ")" }

// GoString is String, so %#v does not print the verifier either.
func (c ConnectSecret) GoString() string { return c.String() }

// digest is the SHA-256 of b.
func digest(b []byte) []byte { h := sha256.Sum256(b); return h[:] }

// StateHash is the SHA-256 of a connection's state parameter: the key a
// pending connection is stored and found under (the state itself is never
// kept).
func StateHash(state string) []byte { return digest([]byte(state)) }

// Callback is the authorization server's answer as the browser brought it
// back: state, code, iss (RFC 9207) and error.
type Callback struct {
	state, code, iss, errorCode string
}

// NewCallback checks a callback before its state is looked up: no
// parameter longer than [MaxCallbackParamLen] ([ErrCallbackTooLong]) and
// a state ([ErrStateRequired]).
func NewCallback(state, code, iss, errorCode string) (Callback, error) {
	for _, v := range []string{state, code, iss, errorCode} {
		if len(v) > MaxCallbackParamLen {
			return Callback{}, ErrCallbackTooLong
		}
	}
	if state == "" {
		return Callback{}, ErrStateRequired
	}
	return Callback{state: state, code: code, iss: iss, errorCode: errorCode}, nil
}

// StateHash is the hash of the callback's state ([StateHash]).
func (c Callback) StateHash() []byte { return StateHash(c.state) }

// Code is the authorization code.
func (c Callback) Code() string { return c.code }

// PendingConnection is a code-flow connection between its start and the
// authorization server's callback. It holds no secret in clear: the
// state and the web session as their SHA-256, the server's sealed
// credential as the SHA-256 of its ciphertext.
type PendingConnection struct {
	stateHash             []byte
	serverID              string
	sessionHash           []byte
	credentialHash        []byte
	issuer                string
	authorizationEndpoint URL
	tokenEndpoint         URL
	issRequired           bool
	redirectURI           string
	createdAt             time.Time
	expiresAt             time.Time
	used                  bool
}

// NewPendingConnection starts a connection of serverID whose sealed
// credential is sealedCredential (the callback connects only over that
// same ciphertext), in the web session sessionID, with the random state
// the authorization server will send back, at the authorization server
// as (checked with [AuthorizationServer.CheckFor] before), returning to
// redirectURI; it expires [ConnectTTL] after now. Every part is required
// ([ErrPendingConnectionMalformed]).
func NewPendingConnection(state, sessionID, serverID string, sealedCredential []byte, as AuthorizationServer, redirectURI string, now time.Time) (*PendingConnection, error) {
	if state == "" || sessionID == "" || redirectURI == "" || len(sealedCredential) == 0 || now.IsZero() {
		return nil, ErrPendingConnectionMalformed
	}
	return newPendingConnection(StateHash(state), serverID, digest([]byte(sessionID)), digest(sealedCredential),
		as.Issuer, as.AuthorizationEndpoint, as.TokenEndpoint, as.IssParameterSupported, redirectURI, now, now.Add(ConnectTTL))
}

// UnmarshalPendingConnectionFromDatabase rebuilds a stored pending
// connection for adapters (ports.OAuthStateRepo), checking again what
// [NewPendingConnection] guarantees: 32-byte hashes, a server id, the
// issuer, both endpoints under today's URL rules (the code goes to the
// token endpoint), the redirect URI and an expiry after the start. A row
// that fails is malformed, never a connection.
func UnmarshalPendingConnectionFromDatabase(
	stateHash []byte, serverID string, sessionHash, credentialHash []byte,
	issuer, authorizationEndpoint, tokenEndpoint string, issRequired bool,
	redirectURI string, createdAt, expiresAt time.Time,
) (*PendingConnection, error) {
	authz, err := ParseURL(authorizationEndpoint)
	if err != nil {
		return nil, errors.Join(ErrPendingConnectionMalformed, err)
	}
	token, err := ParseURL(tokenEndpoint)
	if err != nil {
		return nil, errors.Join(ErrPendingConnectionMalformed, err)
	}
	return newPendingConnection(bytes.Clone(stateHash), serverID, bytes.Clone(sessionHash), bytes.Clone(credentialHash),
		issuer, authz, token, issRequired, redirectURI, createdAt, expiresAt)
}

func newPendingConnection(stateHash []byte, serverID string, sessionHash, credentialHash []byte,
	issuer string, authz, token URL, issRequired bool, redirectURI string, createdAt, expiresAt time.Time,
) (*PendingConnection, error) {
	switch {
	case len(stateHash) != sha256.Size || len(sessionHash) != sha256.Size || len(credentialHash) != sha256.Size,
		!uid.Valid(serverID),
		!(AuthorizationServer{Issuer: issuer, AuthorizationEndpoint: authz, TokenEndpoint: token}).complete(),
		redirectURI == "",
		!expiresAt.After(createdAt):
		return nil, ErrPendingConnectionMalformed
	}
	return &PendingConnection{
		stateHash: stateHash, serverID: serverID, sessionHash: sessionHash, credentialHash: credentialHash,
		issuer: issuer, authorizationEndpoint: authz, tokenEndpoint: token, issRequired: issRequired,
		redirectURI: redirectURI, createdAt: createdAt, expiresAt: expiresAt,
	}, nil
}

// StateHash is the SHA-256 of the state (the store's key).
func (p *PendingConnection) StateHash() []byte { return bytes.Clone(p.stateHash) }

// ServerID is the server being connected.
func (p *PendingConnection) ServerID() string { return p.serverID }

// SessionHash is the SHA-256 of the web session's id.
func (p *PendingConnection) SessionHash() []byte { return bytes.Clone(p.sessionHash) }

// CredentialHash is the SHA-256 of the server's sealed credential at the
// start.
func (p *PendingConnection) CredentialHash() []byte { return bytes.Clone(p.credentialHash) }

// Issuer is the authorization server's issuer the connection expects.
func (p *PendingConnection) Issuer() string { return p.issuer }

// AuthorizationEndpoint is where the admin is sent.
func (p *PendingConnection) AuthorizationEndpoint() URL { return p.authorizationEndpoint }

// TokenEndpoint is the only place the code goes.
func (p *PendingConnection) TokenEndpoint() URL { return p.tokenEndpoint }

// IssRequired reports whether the callback must carry iss (the metadata
// announced RFC 9207).
func (p *PendingConnection) IssRequired() bool { return p.issRequired }

// RedirectURI is the callback URI of the authorization request, sent
// again with the code.
func (p *PendingConnection) RedirectURI() string { return p.redirectURI }

// CreatedAt is when the connection started.
func (p *PendingConnection) CreatedAt() time.Time { return p.createdAt }

// ExpiresAt is when it stops accepting a callback.
func (p *PendingConnection) ExpiresAt() time.Time { return p.expiresAt }

// AuthorizationURL is where the admin is sent: the pinned authorization
// endpoint with a code request for secret's client (RFC 6749 §4.1.1), the
// redirect URI, the scopes, the state (it must be this connection's), the
// S256 challenge of secret's verifier (RFC 7636) and the resource, the
// MCP server's URL (RFC 8707).
func (p *PendingConnection) AuthorizationURL(state string, secret ConnectSecret, scopes []string, resource URL) (string, error) {
	if !bytes.Equal(StateHash(state), p.stateHash) || secret.check() != nil || resource.IsZero() {
		return "", ErrPendingConnectionMalformed
	}
	challenge := sha256.Sum256([]byte(secret.Verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", secret.ClientID)
	q.Set("redirect_uri", p.redirectURI)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", resource.String())
	return p.authorizationEndpoint.String() + "?" + q.Encode(), nil
}

// Finish judges the callback cb, which arrived at now in the web session
// sessionID, and uses the connection up whatever the answer: a second
// Finish is [ErrConnectionUsed]. In this order it refuses a callback
// whose state is not this connection's, compared by hash in constant
// time ([ErrStateMismatch]: the caller looks the connection up by cb's
// state hash, and this does not rely on it), one of another session or
// of none ([ErrOtherSession]), one at or after the expiry
// ([ErrConnectionExpired]), an error of the authorization server
// ([AuthorizationDenied]), a missing iss when the metadata announced it
// ([ErrIssRequired]), any iss that is not the expected issuer
// ([ErrIssMismatch]) and a missing code ([ErrCodeRequired]).
func (p *PendingConnection) Finish(now time.Time, sessionID string, cb Callback) error {
	if p.used {
		return ErrConnectionUsed
	}
	p.used = true
	switch {
	case subtle.ConstantTimeCompare(p.stateHash, cb.StateHash()) != 1:
		return ErrStateMismatch
	case sessionID == "" || subtle.ConstantTimeCompare(p.sessionHash, digest([]byte(sessionID))) != 1:
		return ErrOtherSession
	case !now.Before(p.expiresAt):
		return ErrConnectionExpired
	case cb.errorCode != "":
		return &AuthorizationDenied{Code: plainErrorCode(cb.errorCode)}
	case p.issRequired && cb.iss == "":
		return ErrIssRequired
	case cb.iss != "" && cb.iss != p.issuer:
		return ErrIssMismatch
	case cb.code == "":
		return ErrCodeRequired
	}
	return nil
}

// CheckCredential refuses to go on when the server s is no longer of the
// code flow or its sealed credential is not the ciphertext the connection
// started over ([ErrConnectionCredentialChanged]): an admin's change
// meanwhile wins.
func (p *PendingConnection) CheckCredential(s *Server, sealed []byte) error {
	if !bytes.Equal(digest(sealed), p.credentialHash) || s.CredentialKind() != KindOAuthAuthorizationCode {
		return ErrConnectionCredentialChanged
	}
	return nil
}

// Client returns the credential the code is exchanged with: cred (the
// server's opened credential, checked with [PendingConnection.CheckCredential]),
// which must name the client the start pinned in secret
// ([ErrConnectionCredentialChanged]). The start keeps a dynamically
// registered client with the credential before it stores the connection,
// so a credential without a client id is refused the same way.
func (p *PendingConnection) Client(cred Credential, secret ConnectSecret) (Credential, error) {
	o, ok := cred.OAuth()
	if !ok || o.NeedsRegistration() || secret.ClientID != o.ClientID {
		return Credential{}, ErrConnectionCredentialChanged
	}
	return cred, nil
}

// Tokens is the token response of the code exchange.
type Tokens struct {
	AccessToken  string
	RefreshToken string
	ExpiresAt    time.Time // zero when the server did not say
}

// Connection returns client connected with the exchange's tokens at the
// expected issuer and the pinned token endpoint, by whom and when: with
// the refresh token ([Credential.WithConnection]); without one (the
// scopes may lack offline_access) with the access token until it expires,
// [AccessOnlyLifetime] after now when the answer named no expiry
// ([Credential.WithAccessOnlyConnection]). A refusal is a field error
// that never repeats a token.
func (p *PendingConnection) Connection(client Credential, tokens Tokens, by string, now time.Time) (Credential, error) {
	if tokens.RefreshToken != "" {
		return client.WithConnection(p.issuer, p.tokenEndpoint, tokens.RefreshToken, by, now)
	}
	expires := tokens.ExpiresAt
	if expires.IsZero() {
		expires = now.Add(AccessOnlyLifetime)
	}
	return client.WithAccessOnlyConnection(p.issuer, p.tokenEndpoint, tokens.AccessToken, expires, by, now)
}
