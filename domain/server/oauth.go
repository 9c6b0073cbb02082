package server

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

// The OAuth credential kinds (docs/threat-model.md, OAuth rows). They stay
// behind the same gates as every other credential.
var (
	// KindOAuthClientCredentials: the service fetches access tokens with
	// the client-credentials grant from a token URL the admin gives.
	KindOAuthClientCredentials = CredentialKind{"oauth_client_credentials"}
	// KindOAuthAuthorizationCode: an admin connects the server once in the
	// web interface (authorization code with PKCE); the service keeps the
	// refresh token.
	KindOAuthAuthorizationCode = CredentialKind{"oauth_authorization_code"}
)

// IsOAuth reports whether k is one of the OAuth kinds.
func (k CredentialKind) IsOAuth() bool {
	return k == KindOAuthClientCredentials || k == KindOAuthAuthorizationCode
}

// OAuth is the OAuth part of a credential: what the admin gave, and for
// the code flow what the connection established. ClientSecret and
// RefreshToken are secrets: they exist in memory only between the cipher
// and the token request, like every credential.
type OAuth struct {
	// TokenURL is the token endpoint. The admin gives it for client
	// credentials; for the code flow it is the endpoint the authorization
	// server's metadata named at connection, pinned from then on (zero
	// until connected). Token requests go nowhere else.
	TokenURL     URL
	ClientID     string
	ClientSecret string // optional for the code flow
	// ClientAuth is how the client authenticates at the token endpoint;
	// never empty once built (see [ParseClientAuth]).
	ClientAuth ClientAuth
	Scopes     []string
	// Issuer is the authorization server of the code flow: the one the
	// admin named (required with a client secret), else the one a dynamic
	// registration or the first connection pinned. Metadata, code and
	// token requests go only to its endpoints.
	Issuer string
	// Registered: the client came from a dynamic registration or the
	// instance's metadata document at Issuer, not from the admin; such a
	// client is obtained again when the resource moves to another
	// authorization server ([Credential.ForNewIssuer]).
	Registered bool
	// The connection of the code flow (all zero until an admin connects).
	RefreshToken string
	// AccessToken and AccessExpiresAt are kept only when the authorization
	// server issued no refresh token: the connection then lasts as long as
	// that access token.
	AccessToken     string
	AccessExpiresAt time.Time
	ConnectedBy     string
	ConnectedAt     time.Time
}

// ClientAuth is how an OAuth client authenticates at the token endpoint
// (RFC 6749 §2.3.1, RFC 7523 §2.2, OAuth 2.1's "none" for a public
// client).
type ClientAuth string

// The client authentication methods.
const (
	// ClientSecretBasic: the id and secret as HTTP Basic authorization.
	ClientSecretBasic ClientAuth = "client_secret_basic"
	// ClientSecretPost: the id and secret in the request body, where an
	// authorization server offers nothing else.
	ClientSecretPost ClientAuth = "client_secret_post"
	// PrivateKeyJWT: a client assertion signed with the instance's
	// signing key ring, audience the token endpoint; no secret is stored.
	PrivateKeyJWT ClientAuth = "private_key_jwt"
	// ClientAuthNone: a public client, its id in the body.
	ClientAuthNone ClientAuth = "none"
)

// UsesSecret reports whether the method sends a client secret.
func (a ClientAuth) UsesSecret() bool { return a == ClientSecretBasic || a == ClientSecretPost }

// ParseClientAuth reads the admin's clientAuth (field auth.clientAuth):
// empty is the default, client_secret_basic with a secret and none
// without one.
func ParseClientAuth(s string, hasSecret bool) (ClientAuth, error) {
	switch a := ClientAuth(s); a {
	case "":
		if hasSecret {
			return ClientSecretBasic, nil
		}
		return ClientAuthNone, nil
	case ClientSecretBasic, ClientSecretPost, PrivateKeyJWT, ClientAuthNone:
		return a, nil
	}
	return "", &field.Error{Field: "auth.clientAuth", Reason: "must be client_secret_basic, client_secret_post, private_key_jwt or none"}
}

// Connected reports whether the code flow has a connection: a refresh
// token, or an access token that the server gave without one.
func (o OAuth) Connected() bool { return o.RefreshToken != "" || o.AccessToken != "" }

// OAuth limits. A client id or scope longer than these is not a real one.
const (
	// MaxOAuthClientIDLen is the longest client id.
	MaxOAuthClientIDLen = 256
	// MaxOAuthScopes is the most scopes a credential requests.
	MaxOAuthScopes = 20
	// MaxOAuthScopeLen is the longest scope.
	MaxOAuthScopeLen = 128
	// MaxOAuthIssuerLen is the longest issuer identifier.
	MaxOAuthIssuerLen = limits.MaxURLLen
	// MaxOAuthActorLen is the longest "connected by" name.
	MaxOAuthActorLen = 200
)

// NewOAuthClientCredentials builds a client-credentials credential. The
// token URL follows the server URL's rules (https, no user info, query or
// fragment); the address rules are checked where the URL is saved and
// again at every connection, like the server's own host.
//
// clientAuth is the admin's method ([ParseClientAuth]; empty: basic):
// client_secret_basic or client_secret_post with the secret,
// private_key_jwt without one; a client-credentials client is never a
// public one (none). issuer is the authorization server (optional; an
// https URL), required with private_key_jwt: it is the assertion's
// audience, and the token URL must be on its origin, so an assertion
// goes nowhere else.
func NewOAuthClientCredentials(tokenURL, clientID, clientSecret string, scopes []string, clientAuth, issuer string) (Credential, error) {
	u, err := ParseURL(tokenURL)
	if err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return Credential{}, &field.Error{Field: "auth.tokenUrl", Reason: fe.Reason}
		}
		return Credential{}, err
	}
	auth, err := ParseClientAuth(clientAuth, true)
	if err != nil {
		return Credential{}, err
	}
	if auth == ClientAuthNone {
		return Credential{}, &field.Error{Field: "auth.clientAuth", Reason: "must not be none for client credentials: the client authenticates"}
	}
	if issuer != "" {
		if issuer, err = ParseIssuer(issuer); err != nil {
			return Credential{}, err
		}
	}
	if auth == PrivateKeyJWT {
		iu, err := ParseURL(issuer)
		switch {
		case issuer == "":
			return Credential{}, &field.Error{Field: "auth.issuer", Reason: "is required with private_key_jwt: the assertion's audience"}
		case err != nil || iu.Host() != u.Host() || iu.Port() != u.Port():
			return Credential{}, &field.Error{Field: "auth.tokenUrl", Reason: "must be on the issuer's origin with private_key_jwt"}
		}
	}
	o := OAuth{TokenURL: u, ClientID: clientID, ClientSecret: clientSecret, ClientAuth: auth, Issuer: issuer, Scopes: slices.Clone(scopes)}
	if err := o.check(auth.UsesSecret(), false); err != nil {
		return Credential{}, err
	}
	return Credential{kind: KindOAuthClientCredentials, secret: clientSecret, oauth: &o}, nil
}

// NewOAuthAuthorizationCode builds a code-flow credential that still
// needs its connection; clientSecret may be empty (a public client).
// clientID may be empty too, with no secret: the client is then
// registered dynamically (RFC 7591) when an admin connects, which the
// application allows only for the issuers the operator lists; see
// [Credential.WithRegisteredClient].
//
// issuer is the authorization server the admin names or confirms (an
// https URL without query or fragment, RFC 8414 §2). It is required
// whenever a client secret is given: the secret, the code and the refresh
// token go only to that issuer's endpoints, never to one an MCP server
// names. Without it (a public client) the issuer of the first connection
// is pinned from then on.
//
// clientAuth is the admin's method ([ParseClientAuth]; empty: basic with
// a secret, none without); private_key_jwt, like a secret, binds the
// client to the issuer, which it then requires.
func NewOAuthAuthorizationCode(clientID, clientSecret, issuer string, scopes []string, clientAuth string) (Credential, error) {
	if clientID != "" && (clientSecret != "" || clientAuth == string(PrivateKeyJWT)) && issuer == "" {
		return Credential{}, &field.Error{Field: "auth.issuer", Reason: "is required with a client secret or private_key_jwt: the client authenticates only to this authorization server"}
	}
	return newOAuthAuthorizationCode(clientID, clientSecret, issuer, scopes, clientAuth)
}

// newOAuthAuthorizationCode is [NewOAuthAuthorizationCode] without the
// issuer requirement, for credentials stored before it existed: they load,
// and the application refuses to connect them until the admin names the
// issuer.
func newOAuthAuthorizationCode(clientID, clientSecret, issuer string, scopes []string, clientAuth string) (Credential, error) {
	if clientID == "" && clientSecret != "" {
		return Credential{}, &field.Error{Field: "auth.clientSecret", Reason: "must be empty when clientId is empty (dynamic client registration)"}
	}
	auth, err := ParseClientAuth(clientAuth, clientSecret != "")
	if err != nil {
		return Credential{}, err
	}
	if clientID == "" && auth != ClientAuthNone {
		return Credential{}, &field.Error{Field: "auth.clientAuth", Reason: "must be empty when clientId is empty: the registration decides it"}
	}
	o := OAuth{ClientID: clientID, ClientSecret: clientSecret, ClientAuth: auth, Scopes: slices.Clone(scopes)}
	if issuer != "" {
		iss, err := ParseIssuer(issuer)
		if err != nil {
			return Credential{}, err
		}
		o.Issuer = iss
	}
	if err := o.check(false, clientID == ""); err != nil {
		return Credential{}, err
	}
	return Credential{kind: KindOAuthAuthorizationCode, secret: clientSecret, oauth: &o}, nil
}

// ParseIssuer checks an issuer identifier: an https URL without user
// info, query or fragment (RFC 8414 §2), as the server URL's rules say
// (field auth.issuer). It returns the issuer exactly as given: issuers are
// compared as strings (RFC 8414 §3.3).
func ParseIssuer(issuer string) (string, error) {
	if _, err := ParseURL(issuer); err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return "", &field.Error{Field: "auth.issuer", Reason: fe.Reason}
		}
		return "", err
	}
	return issuer, nil
}

// NeedsIssuer reports whether the credential carries a client secret but
// no issuer (stored before the issuer was required): it cannot connect
// until the admin names the issuer.
func (o OAuth) NeedsIssuer() bool { return o.ClientSecret != "" && o.Issuer == "" }

// NeedsRegistration reports whether the code-flow credential has no client
// id yet, to be registered dynamically at connection.
func (o OAuth) NeedsRegistration() bool { return o.ClientID == "" }

// WithRegisteredClient returns the code-flow credential with the client id
// and secret (empty for a public client) that dynamic client registration
// returned at issuer. Only a credential without a client id takes one: a
// client id the admin gave is never replaced. The issuer is pinned with
// the client (one registration per server and issuer): it must equal the
// credential's issuer when it has one.
//
// auth is how the registered client authenticates: empty for the default
// of its secret (basic with one, none without), or private_key_jwt for a
// client whose metadata document publishes the instance's keys.
func (c Credential) WithRegisteredClient(clientID, clientSecret, issuer string, auth ClientAuth) (Credential, error) {
	if c.kind != KindOAuthAuthorizationCode || c.oauth == nil || c.oauth.ClientID != "" {
		return Credential{}, &field.Error{Field: "auth.clientId", Reason: "only a code-flow credential without a client id takes a registered client"}
	}
	if c.oauth.Issuer != "" && issuer != c.oauth.Issuer {
		return Credential{}, &field.Error{Field: "auth.issuer", Reason: "the client was registered at another authorization server"}
	}
	if _, err := ParseIssuer(issuer); err != nil {
		return Credential{}, err
	}
	a, err := ParseClientAuth(string(auth), clientSecret != "")
	if err != nil {
		return Credential{}, err
	}
	o := *c.oauth
	o.Scopes = slices.Clone(o.Scopes)
	o.ClientID, o.ClientSecret, o.Issuer, o.ClientAuth, o.Registered = clientID, clientSecret, issuer, a, true
	if err := o.check(false, false); err != nil {
		return Credential{}, err
	}
	return Credential{kind: c.kind, secret: clientSecret, oauth: &o}, nil
}

// ErrNotMigratable: the client is the admin's (its id and any secret
// were made for one authorization server), so a move to another issuer
// needs the admin to edit the authentication.
var ErrNotMigratable = errors.New("the client was given by the admin for its issuer")

// ForNewIssuer is the code-flow credential of a server whose resource
// moved to another authorization server: a registered client and its
// connection are dropped, never carried over (no client id, secret or
// refresh token reaches the new issuer), and the admin's scopes stay, so
// the next connection obtains a client there again. A client the admin
// gave is [ErrNotMigratable].
func (c Credential) ForNewIssuer() (Credential, error) {
	if c.kind != KindOAuthAuthorizationCode || c.oauth == nil || !c.oauth.Registered {
		return Credential{}, ErrNotMigratable
	}
	return newOAuthAuthorizationCode("", "", "", c.oauth.Scopes, "")
}

// check validates the admin's part: client id, secret and scopes.
// clientIDOptional allows an empty client id (dynamic registration).
func (o OAuth) check(secretRequired, clientIDOptional bool) error {
	if !(clientIDOptional && o.ClientID == "") && !validToken(o.ClientID, MaxOAuthClientIDLen) {
		return &field.Error{Field: "auth.clientId", Reason: fmt.Sprintf("must be 1 to %d visible ASCII characters without spaces", MaxOAuthClientIDLen)}
	}
	if (secretRequired || o.ClientSecret != "") && !validSecret(o.ClientSecret, false) {
		return &field.Error{Field: "auth.clientSecret", Reason: secretReason(false)}
	}
	if o.ClientAuth.UsesSecret() != (o.ClientSecret != "") {
		if o.ClientSecret == "" {
			return &field.Error{Field: "auth.clientSecret", Reason: "is required with clientAuth " + string(o.ClientAuth)}
		}
		return &field.Error{Field: "auth.clientSecret", Reason: "must be empty with clientAuth " + string(o.ClientAuth)}
	}
	if len(o.Scopes) > MaxOAuthScopes {
		return &field.Error{Field: "auth.scopes", Reason: fmt.Sprintf("must have at most %d scopes", MaxOAuthScopes)}
	}
	for i, s := range o.Scopes {
		if !validScope(s) {
			return &field.Error{Field: "auth.scopes", Reason: fmt.Sprintf("scope %d must be 1 to %d characters of RFC 6749's scope-token", i+1, MaxOAuthScopeLen)}
		}
		if slices.Contains(o.Scopes[:i], s) {
			return &field.Error{Field: "auth.scopes", Reason: "must not repeat a scope"}
		}
	}
	return nil
}

// validToken: 1–max visible ASCII characters, no spaces.
func validToken(s string, max int) bool {
	if len(s) < 1 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// validScope is RFC 6749 §3.3's scope-token: %x21 / %x23-5B / %x5D-7E,
// so neither a space (the separator), a quote nor a backslash.
func validScope(s string) bool {
	if len(s) < 1 || len(s) > MaxOAuthScopeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// OAuth returns the OAuth part of the credential, secrets included, and
// whether it has one. The caller must treat ClientSecret and RefreshToken
// like every credential: sent only to the pinned token URL, never logged.
func (c Credential) OAuth() (OAuth, bool) {
	if c.oauth == nil {
		return OAuth{}, false
	}
	o := *c.oauth
	o.Scopes = slices.Clone(o.Scopes)
	return o, true
}

// WithConnection returns the code-flow credential connected: the issuer
// the authorization server's metadata named, its token endpoint (pinned
// from now on), the refresh token, who connected it and when.
func (c Credential) WithConnection(issuer string, tokenURL URL, refreshToken, by string, at time.Time) (Credential, error) {
	if !validSecret(refreshToken, false) {
		return Credential{}, &field.Error{Field: "auth.refreshToken", Reason: secretReason(false)}
	}
	return c.connect(issuer, tokenURL, by, at, func(o *OAuth) { o.RefreshToken = refreshToken })
}

// WithAccessOnlyConnection is [Credential.WithConnection] for an
// authorization server that issued no refresh token: the connection holds
// the access token of the code exchange and ends when it expires; an
// admin connects again after that.
func (c Credential) WithAccessOnlyConnection(issuer string, tokenURL URL, accessToken string, expiresAt time.Time, by string, at time.Time) (Credential, error) {
	switch {
	case !validSecret(accessToken, false):
		return Credential{}, &field.Error{Field: "auth.accessToken", Reason: secretReason(false)}
	case !expiresAt.After(at):
		return Credential{}, &field.Error{Field: "auth.accessExpiresAt", Reason: "must be after the connection"}
	}
	return c.connect(issuer, tokenURL, by, at, func(o *OAuth) { o.AccessToken, o.AccessExpiresAt = accessToken, expiresAt.UTC() })
}

func (c Credential) connect(issuer string, tokenURL URL, by string, at time.Time, tokens func(*OAuth)) (Credential, error) {
	if c.kind != KindOAuthAuthorizationCode || c.oauth == nil {
		return Credential{}, &field.Error{Field: "auth.type", Reason: "must be oauth_authorization_code to connect"}
	}
	switch {
	case c.oauth.ClientID == "":
		return Credential{}, &field.Error{Field: "auth.clientId", Reason: "is required to connect (register the client first)"}
	case !validToken(issuer, MaxOAuthIssuerLen):
		return Credential{}, &field.Error{Field: "auth.issuer", Reason: "must be a URL"}
	case c.oauth.Issuer != "" && issuer != c.oauth.Issuer:
		// Never a silent switch: the connection is made with the issuer
		// the admin named (or the one pinned before), or not at all.
		return Credential{}, &field.Error{Field: "auth.issuer", Reason: "is not the authorization server this credential is bound to"}
	case c.oauth.NeedsIssuer():
		return Credential{}, &field.Error{Field: "auth.issuer", Reason: "is required with a client secret: edit the authentication"}
	case tokenURL.IsZero():
		return Credential{}, &field.Error{Field: "auth.tokenUrl", Reason: "is required"}
	case by == "" || len(by) > MaxOAuthActorLen || at.IsZero():
		return Credential{}, &field.Error{Field: "auth.connection", Reason: "needs who connected and when"}
	}
	o := *c.oauth
	o.Scopes = slices.Clone(o.Scopes)
	o.Issuer, o.TokenURL, o.ConnectedBy, o.ConnectedAt = issuer, tokenURL, by, at.UTC()
	o.RefreshToken, o.AccessToken, o.AccessExpiresAt = "", "", time.Time{}
	tokens(&o)
	return Credential{kind: c.kind, secret: c.secret, oauth: &o}, nil
}

// WithRefreshToken returns the connected credential with the refresh
// token an authorization server rotated; everything else is kept.
func (c Credential) WithRefreshToken(refreshToken string) (Credential, error) {
	if c.kind != KindOAuthAuthorizationCode || c.oauth == nil || c.oauth.RefreshToken == "" {
		return Credential{}, &field.Error{Field: "auth.type", Reason: "must be an oauth_authorization_code connected with a refresh token"}
	}
	if !validSecret(refreshToken, false) {
		return Credential{}, &field.Error{Field: "auth.refreshToken", Reason: secretReason(false)}
	}
	o := *c.oauth
	o.Scopes = slices.Clone(o.Scopes)
	o.RefreshToken = refreshToken
	return Credential{kind: c.kind, secret: c.secret, oauth: &o}, nil
}

// OAuthView is the part of an OAuth credential that views show and the
// store keeps in clear beside the sealed secret: nothing of it is secret.
type OAuthView struct {
	TokenURL    string
	ClientID    string
	ClientAuth  ClientAuth
	Scopes      []string
	Issuer      string
	ConnectedBy string
	ConnectedAt time.Time
	// ExpiresAt ends a connection without a refresh token (zero otherwise).
	ExpiresAt time.Time
	// Refused is why the last Connect was refused ("" none, else
	// [RefusedIssuerMismatch]); it lasts until the admin connects, replaces
	// the authentication, or a later failure or success replaces the
	// server's last error.
	Refused string
}

// RefusedIssuerMismatch: the MCP server named another authorization
// server than the issuer the credential is bound to (or the issuer put
// its token endpoint on another origin); nothing was sent there.
const RefusedIssuerMismatch = "issuer_mismatch"

// Connected reports whether the view is of a code flow connected at now:
// connected, and not past the end of a connection without refresh token.
func (v OAuthView) Connected(now time.Time) bool {
	return !v.ConnectedAt.IsZero() && (v.ExpiresAt.IsZero() || now.Before(v.ExpiresAt))
}

// View returns the credential's public OAuth part (zero for other kinds).
func (c Credential) View() OAuthView {
	if c.oauth == nil {
		return OAuthView{}
	}
	o := c.oauth
	v := OAuthView{ClientID: o.ClientID, ClientAuth: o.ClientAuth, Scopes: slices.Clone(o.Scopes), Issuer: o.Issuer, ConnectedBy: o.ConnectedBy, ConnectedAt: o.ConnectedAt, ExpiresAt: o.AccessExpiresAt}
	if !o.TokenURL.IsZero() {
		v.TokenURL = o.TokenURL.String()
	}
	return v
}
