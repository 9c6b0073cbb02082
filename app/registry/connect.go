package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The code-flow connection of an oauth_authorization_code server (the
// web interface's "Connect"): StartConnect sends the admin to the
// authorization server with PKCE (RFC 7636, S256) and RFC 8707's
// resource, FinishConnect takes the callback. Between the two, the
// pending state is stored (ports.OAuthStateRepo): the state as its
// SHA-256, bound to the web session, used once, for ConnectStateTTL; the
// verifier sealed under oauth_state:<hex state hash>; the authorization
// server's endpoints pinned as discovery found them.

// ConnectStateTTL is how long a started connection waits for its callback.
const ConnectStateTTL = 10 * time.Minute

// ActionServerConnect is the audit action of a completed connection.
const ActionServerConnect = "server.connect"

// ActionServerRegisterClient is the audit action of a client registered
// dynamically at an authorization server (kept for the next connections).
const ActionServerRegisterClient = "server.register_client"

// issuerRefused is the reason shown when the MCP server names another
// authorization server than the one the credential is bound to.
const issuerRefused = "the MCP server names another authorization server than the issuer this server's authentication is bound to, or that server's token endpoint is on another origin; nothing was sent to it. Check the issuer and save the authentication again to confirm a new one"

// maxCallbackParam bounds the callback's state, code, iss and error.
const maxCallbackParam = 2048

// DCRIssuers are the issuers (exact URLs) whose authorization servers may
// register a client dynamically (QUAVON_MCP_OAUTH_DCR_ISSUERS); empty by
// default, so a code-flow server without a client id cannot connect.
type DCRIssuers []string

// ConnectDeps are the ports the connection use cases need.
type ConnectDeps struct {
	Tenants ports.Tenants
	Cipher  ports.Cipher
	OAuth   ports.OAuthClient
	Clock   ports.Clock
	Gates   app.Gates
	// Rand is the source of the state and the PKCE verifier
	// (crypto/rand.Reader).
	Rand       io.Reader
	DCRIssuers DCRIssuers
}

// StartConnect starts the connection of a code-flow server. SessionID
// identifies the web session the callback must come back in; RedirectURI
// is the service's callback (QUAVON_PUBLIC_URL + /ui/oauth/callback).
type StartConnect struct {
	ServerID    string
	SessionID   string
	RedirectURI string
}

// StartConnectHandler starts connections.
type StartConnectHandler struct{ d ConnectDeps }

// NewStartConnectHandler returns the handler.
func NewStartConnectHandler(d ConnectDeps) *StartConnectHandler { return &StartConnectHandler{d: d} }

// connectState is the sealed part of a pending connection.
type connectState struct {
	Verifier     string `json:"verifier"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
}

// StateAAD binds a pending connection's sealed part to its state.
func StateAAD(stateHash []byte) []byte { return []byte("oauth_state:" + hex.EncodeToString(stateHash)) }

func sha(b []byte) []byte { h := sha256.Sum256(b); return h[:] }

// oauthFailure maps the OAuth client's failures: a refusal of the
// authorization server is server_unauthorized, unusable metadata a
// protocol_error, the transport's failures as for discovery.
func oauthFailure(what string, err error) error {
	switch {
	case errors.Is(err, ports.ErrOAuthRejected):
		return &app.Error{Code: app.CodeServerUnauthorized, Message: what + ": the authorization server refused the request", Cause: err}
	case errors.Is(err, ports.ErrOAuthIssuer):
		return &app.Error{Code: app.CodeServerUnauthorized, Message: what + ": " + issuerRefused, Cause: err}
	case errors.Is(err, ports.ErrOAuthMetadata):
		return &app.Error{Code: app.CodeProtocolError, Message: what + ": the server's OAuth metadata is missing or unusable", Cause: err}
	}
	code, _ := app.RemoteFailure(err)
	return &app.Error{Code: code, Message: what + " failed: " + string(code), Cause: err}
}

func randomToken(r io.Reader) (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("registry: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Handle checks the gates, reads the server (not_found) and refuses one
// whose auth type is not oauth_authorization_code (validation_failed on
// auth.type); opens its credential (keys_unavailable); discovers the
// authorization server and refuses metadata without S256 among its PKCE
// methods (an empty list is tolerated) as protocol_error; registers a
// client when the credential has no client id, only at an issuer the
// operator listed (else validation_failed on auth.clientId); stores the
// pending state and returns the authorization URL.
func (h *StartConnectHandler) Handle(ctx context.Context, p ports.Principal, cmd StartConnect) (string, error) {
	if err := h.d.Gates.Check(); err != nil {
		return "", err
	}
	id, err := srvParseID(cmd.ServerID)
	if err != nil {
		return "", err
	}
	if cmd.SessionID == "" || cmd.RedirectURI == "" {
		return "", errors.New("registry: start connect: session and redirect URI are required")
	}
	var (
		s   *server.Server
		enc []byte
	)
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if s, err = tx.Servers().Get(ctx, id); err != nil {
			return err
		}
		enc, err = tx.Servers().Credential(ctx, id)
		return err
	})
	if err != nil {
		return "", srvStoreError(err)
	}
	if s.CredentialKind() != server.KindOAuthAuthorizationCode {
		return "", app.Invalid(map[string]string{"auth.type": "must be oauth_authorization_code to connect"})
	}
	cred, err := app.OpenCredential(h.d.Cipher, s.ID(), enc)
	if err != nil {
		return "", app.KeysUnavailable(err)
	}
	o, ok := cred.OAuth()
	if !ok {
		return "", app.Invalid(map[string]string{"auth.type": "must be oauth_authorization_code to connect"})
	}
	if o.NeedsIssuer() {
		return "", app.Invalid(map[string]string{"auth.issuer": "is required with a client secret: edit the authentication and name the authorization server's issuer"})
	}
	// Metadata comes only from the issuer the credential is bound to (the
	// admin's, or the one a registration or connection pinned); an MCP
	// server that names another is refused, never followed.
	md, err := h.d.OAuth.Discover(ctx, s.URL(), o.Issuer)
	if errors.Is(err, ports.ErrOAuthIssuer) {
		h.recordUnauthorized(ctx, p, s.ID())
	}
	if err != nil {
		return "", oauthFailure("OAuth discovery", err)
	}
	if o.Issuer != "" && md.Issuer != o.Issuer {
		h.recordUnauthorized(ctx, p, s.ID())
		return "", oauthFailure("OAuth discovery", ports.ErrOAuthIssuer)
	}
	if md.Issuer == "" || md.AuthorizationEndpoint.IsZero() || md.TokenEndpoint.IsZero() {
		return "", oauthFailure("OAuth discovery", ports.ErrOAuthMetadata)
	}
	if len(md.CodeChallengeMethods) > 0 && !slices.Contains(md.CodeChallengeMethods, "S256") {
		return "", &app.Error{Code: app.CodeProtocolError, Message: "OAuth discovery: the authorization server does not support PKCE with S256"}
	}
	clientID, clientSecret := o.ClientID, ""
	if o.NeedsRegistration() {
		if !slices.Contains(h.d.DCRIssuers, md.Issuer) {
			return "", app.Invalid(map[string]string{"auth.clientId": "is required: this instance does not allow dynamic client registration at this authorization server (QUAVON_MCP_OAUTH_DCR_ISSUERS)"})
		}
		if md.RegistrationEndpoint.IsZero() {
			return "", app.Invalid(map[string]string{"auth.clientId": "is required: the authorization server offers no dynamic client registration"})
		}
		clientID, clientSecret, err = h.d.OAuth.Register(ctx, md, cmd.RedirectURI, o.Scopes)
		if err != nil {
			return "", oauthFailure("OAuth client registration", err)
		}
		if clientID == "" {
			return "", oauthFailure("OAuth client registration", ports.ErrOAuthRejected)
		}
		// One registration per server and issuer: the client is kept
		// with the credential (issuer pinned) before the admin leaves, so
		// the next Connect reuses it instead of registering again.
		if enc, err = h.keepRegistration(ctx, p, s, enc, cred, clientID, clientSecret, md.Issuer); err != nil {
			return "", err
		}
		clientSecret = ""
	}

	state, err := randomToken(h.d.Rand)
	if err != nil {
		return "", err
	}
	verifier, err := randomToken(h.d.Rand)
	if err != nil {
		return "", err
	}
	stateHash := sha([]byte(state))
	plain, err := json.Marshal(connectState{Verifier: verifier, ClientID: clientID, ClientSecret: clientSecret})
	if err != nil {
		return "", err
	}
	defer clear(plain)
	if h.d.Cipher == nil {
		return "", app.KeysUnavailable(nil)
	}
	sealed, err := h.d.Cipher.Seal(plain, StateAAD(stateHash))
	if err != nil {
		return "", app.KeysUnavailable(err)
	}
	now := h.d.Clock.Now()
	st := ports.OAuthState{
		StateHash: stateHash, ServerID: s.ID(), SessionHash: sha([]byte(cmd.SessionID)), Sealed: sealed,
		CredentialHash: sha(enc), Issuer: md.Issuer,
		AuthorizationEndpoint: md.AuthorizationEndpoint.String(), TokenEndpoint: md.TokenEndpoint.String(),
		IssParameterSupported: md.IssParameterSupported, RedirectURI: cmd.RedirectURI,
		CreatedAt: now, ExpiresAt: now.Add(ConnectStateTTL),
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.OAuthStates().Insert(ctx, st)
	})
	if err != nil {
		return "", srvStoreError(err)
	}

	challenge := sha256.Sum256([]byte(verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", clientID)
	q.Set("redirect_uri", cmd.RedirectURI)
	if len(o.Scopes) > 0 {
		q.Set("scope", strings.Join(o.Scopes, " "))
	}
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", s.URL().String())
	return md.AuthorizationEndpoint.String() + "?" + q.Encode(), nil
}

// recordUnauthorized notes server_unauthorized as the server's last error
// and issuer_mismatch as the connection's refusal (its view and status say
// so) after the MCP server named another authorization server. Best
// effort: the refusal stands either way.
func (h *StartConnectHandler) recordUnauthorized(ctx context.Context, p ports.Principal, id string) {
	_ = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			s.RefuseConnection(server.RefusedIssuerMismatch)
			return ports.CredentialUpdate{}, nil
		})
		return err
	})
}

// keepRegistration stores the dynamically registered client with the
// credential, over the credential read before (else the admin changed it:
// validation_failed), audits it and returns the new sealed credential.
func (h *StartConnectHandler) keepRegistration(ctx context.Context, p ports.Principal, s *server.Server, enc []byte, cred server.Credential, clientID, clientSecret, issuer string) ([]byte, error) {
	registered, err := cred.WithRegisteredClient(clientID, clientSecret, issuer)
	if err != nil {
		return nil, &app.Error{Code: app.CodeProtocolError, Message: "OAuth client registration: the authorization server's answer is unusable", Cause: errors.New("registered client refused by the domain")}
	}
	sealed, err := app.SealCredential(h.d.Cipher, s.ID(), registered)
	if err != nil {
		return nil, err
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, s.ID(), func(cur *server.Server) (ports.CredentialUpdate, error) {
			stored, err := tx.Servers().Credential(ctx, cur.ID())
			if err != nil {
				return ports.CredentialUpdate{}, err
			}
			if !bytes.Equal(stored, enc) {
				return ports.CredentialUpdate{}, refused("auth", "changed since the connection started; connect again")
			}
			if err := cur.RegisterClient(registered, h.d.Clock.Now()); err != nil {
				return ports.CredentialUpdate{}, srvDomainError(err)
			}
			return ports.CredentialUpdate{Replace: true, Encrypted: sealed}, nil
		})
		if err != nil {
			return err
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{Action: ActionServerRegisterClient, Actor: app.Actor(p), Target: s.ID(), At: h.d.Clock.Now(),
			Details: map[string]any{"clientId": clientID, "issuer": issuer}})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return sealed, nil
}

// FinishConnect is the authorization server's callback: the query's
// state, code, iss (RFC 9207) and error, and the web session it arrived in.
type FinishConnect struct {
	SessionID string
	State     string
	Code      string
	Iss       string
	Error     string
}

// FinishConnectHandler completes connections.
type FinishConnectHandler struct{ d ConnectDeps }

// NewFinishConnectHandler returns the handler.
func NewFinishConnectHandler(d ConnectDeps) *FinishConnectHandler { return &FinishConnectHandler{d: d} }

// refused is the answer to a callback that cannot complete a connection.
func refused(field, reason string) error { return app.Invalid(map[string]string{field: reason}) }

// AccessOnlyLifetime is how long a connection without a refresh token is
// taken to last when the token response named no expiry.
const AccessOnlyLifetime = time.Hour

// Handle checks the gates, then consumes the state (single use: the state
// is deleted in its own transaction before anything else is judged, so a
// replay finds nothing) and refuses, each as validation_failed with
// nothing stored: an unknown, used or expired state; a state of another
// web session; an error the authorization server sent; a missing iss when
// the server announced it, or any iss that is not the pinned issuer
// (RFC 9207); a server whose credential changed since the start. It then
// exchanges the code at the pinned token endpoint with the verifier and
// the server URL as resource (server_unauthorized when refused), stores
// the connection (the refresh token sealed with the credential, under
// mcp_servers:<id>; without a refresh token, the access token of the
// exchange until it expires) and audits server.connect without secrets.
func (h *FinishConnectHandler) Handle(ctx context.Context, p ports.Principal, cmd FinishConnect) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	for _, v := range []string{cmd.State, cmd.Code, cmd.Iss, cmd.Error} {
		if len(v) > maxCallbackParam {
			return nil, refused("state", "the callback's parameters are too long")
		}
	}
	if cmd.State == "" {
		return nil, refused("state", "is required")
	}
	stateHash := sha([]byte(cmd.State))
	var st ports.OAuthState
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		st, err = tx.OAuthStates().Take(ctx, stateHash)
		return err
	})
	if errors.Is(err, ports.ErrNotFound) {
		return nil, refused("state", "is unknown or already used; connect again")
	}
	if err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	switch {
	case cmd.SessionID == "" || subtle.ConstantTimeCompare(st.SessionHash, sha([]byte(cmd.SessionID))) != 1:
		return nil, refused("state", "belongs to another session; connect again")
	case !now.Before(st.ExpiresAt):
		return nil, refused("state", "has expired; connect again")
	case cmd.Error != "":
		return nil, refused("error", "the authorization server refused the connection"+asErrorCode(cmd.Error))
	case st.IssParameterSupported && cmd.Iss == "":
		return nil, refused("iss", "is required by the authorization server's metadata")
	case cmd.Iss != "" && cmd.Iss != st.Issuer:
		return nil, refused("iss", "is not the issuer the connection started with")
	case cmd.Code == "":
		return nil, refused("code", "is required")
	}
	if h.d.Cipher == nil {
		return nil, app.KeysUnavailable(nil)
	}
	plain, err := h.d.Cipher.Open(st.Sealed, StateAAD(stateHash))
	if err != nil {
		return nil, app.KeysUnavailable(err)
	}
	var cs connectState
	err = json.Unmarshal(plain, &cs)
	clear(plain)
	if err != nil || cs.Verifier == "" || cs.ClientID == "" {
		return nil, fmt.Errorf("registry: finish connect: malformed sealed state")
	}
	tokenURL, err := server.ParseURL(st.TokenEndpoint)
	if err != nil {
		return nil, fmt.Errorf("registry: finish connect: stored token endpoint: %w", err)
	}

	var (
		s   *server.Server
		enc []byte
	)
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if s, err = tx.Servers().Get(ctx, st.ServerID); err != nil {
			return err
		}
		enc, err = tx.Servers().Credential(ctx, st.ServerID)
		return err
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	if !bytes.Equal(sha(enc), st.CredentialHash) || s.CredentialKind() != server.KindOAuthAuthorizationCode {
		return nil, refused("auth", "changed since the connection started; connect again")
	}
	cred, err := app.OpenCredential(h.d.Cipher, s.ID(), enc)
	if err != nil {
		return nil, app.KeysUnavailable(err)
	}
	o, _ := cred.OAuth()
	if o.NeedsRegistration() {
		if cred, err = cred.WithRegisteredClient(cs.ClientID, cs.ClientSecret, st.Issuer); err != nil {
			return nil, srvDomainError(err)
		}
	} else if cs.ClientID != o.ClientID {
		return nil, refused("auth", "changed since the connection started; connect again")
	}
	o, _ = cred.OAuth()

	tokens, err := h.d.OAuth.ExchangeCode(ctx, ports.OAuthCodeExchange{
		TokenURL: tokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		Code: cmd.Code, Verifier: cs.Verifier, RedirectURI: st.RedirectURI, Resource: s.URL(),
	})
	if err != nil {
		return nil, oauthFailure("OAuth code exchange", err)
	}
	actor := app.Actor(p)
	var connected server.Credential
	if tokens.RefreshToken != "" {
		connected, err = cred.WithConnection(st.Issuer, tokenURL, tokens.RefreshToken, actor, now)
	} else {
		// No refresh token (the scopes may lack offline_access): the
		// connection lasts as long as this access token, and the server
		// page says until when.
		expires := tokens.ExpiresAt
		if expires.IsZero() {
			expires = now.Add(AccessOnlyLifetime)
		}
		connected, err = cred.WithAccessOnlyConnection(st.Issuer, tokenURL, tokens.AccessToken, expires, actor, now)
	}
	if err != nil {
		// The refresh token is not named: the field error's reason is fixed.
		return nil, &app.Error{Code: app.CodeProtocolError, Message: "OAuth code exchange: the authorization server's answer is unusable", Cause: errors.New("connection refused by the domain")}
	}
	sealed, err := app.SealCredential(h.d.Cipher, s.ID(), connected)
	if err != nil {
		return nil, err
	}
	var updated *server.Server
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		u, err := tx.Servers().Update(ctx, s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
			stored, err := tx.Servers().Credential(ctx, s.ID())
			if err != nil {
				return ports.CredentialUpdate{}, err
			}
			if !bytes.Equal(sha(stored), st.CredentialHash) {
				return ports.CredentialUpdate{}, refused("auth", "changed since the connection started; connect again")
			}
			if err := s.Connect(connected, now); err != nil {
				return ports.CredentialUpdate{}, srvDomainError(err)
			}
			return ports.CredentialUpdate{Replace: true, Encrypted: sealed}, nil
		})
		if err != nil {
			return err
		}
		updated = u
		v := u.OAuth()
		details := map[string]any{"authType": u.CredentialKind().String(), "clientId": v.ClientID, "scopes": append([]string{}, v.Scopes...), "issuer": v.Issuer}
		if hint := u.CredentialHint(); hint != "" {
			details["hint"] = hint
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{Action: ActionServerConnect, Actor: actor, Target: u.ID(), At: now, Details: details})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return updated, nil
}

// asErrorCode repeats an authorization server's error code when it is
// one of RFC 6749's plain codes; any other text is not reflected.
func asErrorCode(e string) string {
	if len(e) > 64 {
		return ""
	}
	for i := 0; i < len(e); i++ {
		if c := e[i]; (c < 'a' || c > 'z') && c != '_' {
			return ""
		}
	}
	return " (" + e + ")"
}
