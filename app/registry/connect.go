package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The code-flow connection of an oauth_authorization_code server (the
// web interface's "Connect"): StartConnect sends the admin to the
// authorization server with PKCE (RFC 7636, S256) and RFC 8707's
// resource, FinishConnect takes the callback. Between the two, the
// connection is a server.PendingConnection, whose rules are the domain's
// (single use, bound to the web session, server.ConnectTTL, RFC 9207's
// iss, the authorization server's endpoints, the redirect URI and the
// client pinned); it is stored through ports.OAuthStateRepo, which loads
// it back through the domain's loader, with its secret sealed by
// app.SealConnectSecret under oauth_state:<hex state hash>.
// These handlers are the steps around it: read, discover, register,
// exchange, save, audit.

// ActionServerConnect is the audit action of a completed connection.
const ActionServerConnect = "server.connect"

// ActionServerRegisterClient is the audit action of a client registered
// dynamically at an authorization server (kept for the next connections).
const ActionServerRegisterClient = "server.register_client"

// issuerRefused is the reason shown when the MCP server names another
// authorization server than the one the credential is bound to.
const issuerRefused = "the MCP server names another authorization server than the issuer this server's authentication is bound to, or that server's token endpoint is on another origin; nothing was sent to it. Check the issuer and save the authentication again to confirm a new one"

// DCRIssuers are the issuers (exact URLs) whose authorization servers may
// register a client dynamically (QUAVON_MCP_OAUTH_DCR_ISSUERS); empty by
// default, so a code-flow server without a client id cannot connect.
type DCRIssuers []string

// ClientDocument is the instance's client ID metadata document as the
// connection uses it (server.ClientMetadataURL).
type ClientDocument struct {
	// URL is the document's https URL, the client id of its client; ""
	// when the instance publishes none.
	URL string
	// Signs: the instance has signing keys (QUAVON_OAUTH_SIGNING_KEYS),
	// so the document's client authenticates with private_key_jwt.
	Signs bool
}

// ConnectDeps are the ports the connection use cases need.
type ConnectDeps struct {
	Tenants ports.Tenants
	Cipher  app.Vault
	OAuth   ports.OAuthClient
	Clock   ports.Clock
	Gates   app.Gates
	// Rand is the source of the state and the PKCE verifier
	// (crypto/rand.Reader).
	Rand       ports.Random
	DCRIssuers DCRIssuers
	// Document is the instance's client ID metadata document: its URL
	// ("" without an https QUAVON_PUBLIC_URL: no such client) and whether
	// the instance signs (private_key_jwt).
	Document ClientDocument
	// Allowed is the operator's allowlist of server URLs
	// (QUAVON_MCP_ALLOWED_URLS): a server outside it is neither
	// connected nor asked for its authorization server. The zero value
	// allows any URL.
	Allowed server.AllowedURLs
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

// Handle checks the gates, reads the server (not_found) and refuses one
// whose auth type is not oauth_authorization_code (validation_failed on
// auth.type); opens its credential (keys_unavailable) and refuses a
// client secret without an issuer (auth.issuer); discovers the
// authorization server at the bound issuer and refuses another issuer
// (server_unauthorized, recorded), incomplete metadata or metadata
// without S256 among its PKCE methods (an empty list is tolerated) as
// protocol_error; registers a client when the credential has no client
// id, only at an issuer the operator listed (else validation_failed on
// auth.clientId); stores the pending connection and returns the
// authorization URL.
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
	s, enc, cred, err := h.read(ctx, p, id)
	if err != nil {
		return "", err
	}
	o, err := cred.ConnectingOAuth()
	if err != nil {
		return "", srvDomainError(err)
	}
	md, as, err := h.discover(ctx, p, s, o.Issuer)
	if errors.Is(err, errOtherIssuer) && o.Registered {
		// The resource moved to another authorization server, and its
		// client was one the service obtained: the admin connecting now
		// obtains one at the new issuer; nothing of the old client or its
		// connection goes there.
		if cred, err = cred.ForNewIssuer(); err != nil {
			return "", srvDomainError(err)
		}
		o, _ = cred.OAuth()
		if md, as, err = h.discover(ctx, p, s, ""); err == nil {
			h.auditMigration(ctx, p, s.ID(), s.OAuth().Issuer, as.Issuer)
		}
	}
	if err != nil {
		return "", err
	}
	clientID, enc, err := h.client(ctx, p, s, enc, cred, o, md, as, cmd.RedirectURI)
	if err != nil {
		return "", err
	}
	return h.begin(ctx, p, s, enc, as, clientID, o.Scopes, cmd)
}

// read reads the server and its sealed credential, refuses a server that
// cannot connect (before any key is needed) and opens the credential.
func (h *StartConnectHandler) read(ctx context.Context, p ports.Principal, id string) (*server.Server, []byte, server.Credential, error) {
	s, enc, err := readServer(ctx, h.d.Tenants, h.d.Allowed, p.TenantID, id)
	if err != nil {
		return nil, nil, server.Credential{}, err
	}
	if err := s.CheckConnectable(); err != nil {
		return nil, nil, server.Credential{}, srvDomainError(err)
	}
	cred, err := app.OpenCredential(h.d.Cipher, s.ID(), enc)
	if err != nil {
		return nil, nil, server.Credential{}, app.KeysUnavailable(err)
	}
	return s, enc, cred, nil
}

// readServer reads a server and its sealed credential in one tenant
// transaction (not_found when it is gone); a server whose URL the
// operator's allowlist does not allow is refused (validation_failed on
// url), so neither the start nor the callback of a connection reaches it.
func readServer(ctx context.Context, tenants ports.Tenants, allowed server.AllowedURLs, tenantID, id string) (s *server.Server, enc []byte, err error) {
	err = tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if s, err = tx.Servers().Get(ctx, id); err != nil {
			return err
		}
		enc, err = tx.Servers().Credential(ctx, id)
		return err
	})
	if err != nil {
		return nil, nil, srvStoreError(err)
	}
	if err := allowed.Check(s.URL()); err != nil {
		return nil, nil, srvDomainError(err)
	}
	return s, enc, nil
}

// discover asks for the authorization server of s at the issuer the
// credential is bound to ("" before the first connection pins one) and
// checks what it found (server.AuthorizationServer.CheckFor): metadata
// comes only from the bound issuer, and an MCP server that names another
// is refused and recorded, never followed.
func (h *StartConnectHandler) discover(ctx context.Context, p ports.Principal, s *server.Server, bound string) (ports.OAuthMetadata, server.AuthorizationServer, error) {
	md, err := h.d.OAuth.Discover(ctx, s.URL(), bound)
	if errors.Is(err, ports.ErrOAuthIssuer) {
		h.recordUnauthorized(ctx, p, s.ID())
		return md, server.AuthorizationServer{}, errors.Join(errOtherIssuer, oauthFailure("OAuth discovery", err))
	}
	if err != nil {
		return md, server.AuthorizationServer{}, oauthFailure("OAuth discovery", err)
	}
	as := md.AuthorizationServer()
	switch err := as.CheckFor(bound); {
	case errors.Is(err, server.ErrOtherIssuer):
		h.recordUnauthorized(ctx, p, s.ID())
		return md, as, errors.Join(errOtherIssuer, oauthFailure("OAuth discovery", ports.ErrOAuthIssuer))
	case errors.Is(err, server.ErrMetadataIncomplete):
		return md, as, oauthFailure("OAuth discovery", ports.ErrOAuthMetadata)
	case errors.Is(err, server.ErrPKCEUnsupported):
		return md, as, &app.Error{Code: app.CodeProtocolError, Message: "OAuth discovery: the authorization server does not support PKCE with S256"}
	case err != nil:
		return md, as, err
	}
	return md, as, nil
}

// client is the connection's client, in server.ClientSourceFor's order:
// the admin's (its method checked against the authorization server's
// list before anything is sent); the instance's metadata document, whose
// URL is the client id (nothing registered); or one registered
// dynamically. A document's or a registration's client is kept with the
// credential: one per server and issuer, stored before the admin leaves,
// so the next Connect reuses it. It returns the client id and the sealed
// credential.
func (h *StartConnectHandler) client(ctx context.Context, p ports.Principal, s *server.Server, enc []byte, cred server.Credential, o server.OAuth, md ports.OAuthMetadata, as server.AuthorizationServer, redirectURI string) (string, []byte, error) {
	src, err := as.ClientSourceFor(o, h.d.Document.URL, h.d.Document.Signs, h.d.DCRIssuers)
	switch {
	case errors.Is(err, server.ErrRegistrationNotAllowed):
		return "", nil, app.Invalid(map[string]string{"auth.clientId": "is required: this authorization server takes no client ID metadata document from this instance, and this instance does not allow dynamic client registration there (QUAVON_MCP_OAUTH_DCR_ISSUERS)"})
	case errors.Is(err, server.ErrNoRegistrationEndpoint):
		return "", nil, app.Invalid(map[string]string{"auth.clientId": "is required: the authorization server takes no client ID metadata document from this instance and offers no dynamic client registration"})
	case err != nil:
		return "", nil, err
	}
	var reg ports.OAuthRegistration
	switch src {
	case server.ClientGiven:
		if err := as.CheckClientAuth(o.ClientAuth); err != nil {
			return "", nil, &app.Error{Code: app.CodeProtocolError, Message: "OAuth discovery: the authorization server does not accept this client's authentication (" + string(o.ClientAuth) + "); choose another clientAuth"}
		}
		return o.ClientID, enc, nil
	case server.ClientFromDocument:
		reg = ports.OAuthRegistration{ClientID: h.d.Document.URL, ClientAuth: server.DocumentAuth(h.d.Document.Signs)}
	default:
		if reg, err = h.d.OAuth.Register(ctx, md, redirectURI, o.Scopes, as.RegistrationAuth()); err != nil {
			return "", nil, oauthFailure("OAuth client registration", err)
		}
		if reg.ClientID == "" {
			return "", nil, oauthFailure("OAuth client registration", ports.ErrOAuthRejected)
		}
	}
	if enc, err = h.keepRegistration(ctx, p, s, enc, cred, reg, as.Issuer, src == server.ClientFromDocument); err != nil {
		return "", nil, err
	}
	return reg.ClientID, enc, nil
}

// begin stores a new pending connection over the sealed credential enc,
// its secret (a random PKCE verifier and the client) sealed under its
// random state, and returns the authorization URL the admin goes to.
func (h *StartConnectHandler) begin(ctx context.Context, p ports.Principal, s *server.Server, enc []byte, as server.AuthorizationServer, clientID string, scopes []string, cmd StartConnect) (string, error) {
	state, err := randomToken(h.d.Rand)
	if err != nil {
		return "", err
	}
	verifier, err := randomToken(h.d.Rand)
	if err != nil {
		return "", err
	}
	secret, err := server.NewConnectSecret(verifier, clientID)
	if err != nil {
		return "", fmt.Errorf("registry: start connect: %w", err)
	}
	pc, err := server.NewPendingConnection(state, cmd.SessionID, s.ID(), enc, as, cmd.RedirectURI, h.d.Clock.Now())
	if err != nil {
		return "", fmt.Errorf("registry: start connect: %w", err)
	}
	sealed, err := app.SealConnectSecret(h.d.Cipher, pc.StateHash(), secret)
	if err != nil {
		return "", err
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.OAuthStates().Insert(ctx, pc, sealed)
	})
	if err != nil {
		return "", srvStoreError(err)
	}
	authURL, err := pc.AuthorizationURL(state, secret, scopes, s.URL())
	if err != nil {
		return "", fmt.Errorf("registry: start connect: %w", err)
	}
	return authURL, nil
}

// errOtherIssuer marks a discovery refused because the MCP server names
// another authorization server than the bound one.
var errOtherIssuer = errors.New("the server names another authorization server")

// ActionServerMigrateIssuer is the audit action of a connection that
// obtains a new client because the server moved to another
// authorization server.
const ActionServerMigrateIssuer = "server.migrate_issuer"

// auditMigration audits the move (best effort: the connection's own
// audit events follow).
func (h *StartConnectHandler) auditMigration(ctx context.Context, p ports.Principal, id, from, to string) {
	_ = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Audit().Append(ctx, ports.AuditEvent{Action: ActionServerMigrateIssuer, Actor: app.Actor(p), Target: id, At: h.d.Clock.Now(),
			Details: map[string]any{"from": from, "to": to}})
	})
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
func (h *StartConnectHandler) keepRegistration(ctx context.Context, p ports.Principal, s *server.Server, enc []byte, cred server.Credential, reg ports.OAuthRegistration, issuer string, document bool) ([]byte, error) {
	clientID := reg.ClientID
	registered, err := cred.WithRegisteredClient(reg.ClientID, reg.ClientSecret, issuer, reg.ClientAuth)
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
				return ports.CredentialUpdate{}, connectRefusal(server.ErrConnectionCredentialChanged)
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
			Details: map[string]any{"clientId": clientID, "issuer": issuer, "clientAuth": string(registered.View().ClientAuth), "metadataDocument": document}})
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

// Handle checks the gates and the callback's parameters, then takes the
// pending connection (single use: it is deleted in its own transaction
// before anything else is judged, so a replay finds nothing) and refuses,
// each as validation_failed with nothing stored, what
// server.PendingConnection.Finish refuses: an unknown, used or expired
// state, or one that is not the taken connection's; a state of another
// web session; an error the authorization server sent; a missing iss
// when the server announced it, or any iss that is not the pinned issuer
// (RFC 9207). It refuses a server whose credential or client changed
// since the start, exchanges the code at the pinned token endpoint with
// the verifier, the pinned redirect URI and the server URL as resource
// (server_unauthorized when refused), stores the connection (the refresh
// token sealed with the credential, under mcp_servers:<id>; without a
// refresh token, the access token of the exchange until it expires) and
// audits server.connect without secrets.
func (h *FinishConnectHandler) Handle(ctx context.Context, p ports.Principal, cmd FinishConnect) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	cb, err := server.NewCallback(cmd.State, cmd.Code, cmd.Iss, cmd.Error)
	if err != nil {
		return nil, connectRefusal(err)
	}
	pc, sealed, err := h.take(ctx, p, cb)
	if err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	if err := pc.Finish(now, cmd.SessionID, cb); err != nil {
		return nil, connectRefusal(err)
	}
	secret, err := app.OpenConnectSecret(h.d.Cipher, pc.StateHash(), sealed)
	if err != nil {
		return nil, err
	}
	s, client, err := h.client(ctx, p, pc, secret)
	if err != nil {
		return nil, err
	}
	connected, err := h.exchange(ctx, pc, s, client, secret, cb, app.Actor(p), now)
	if err != nil {
		return nil, err
	}
	return h.save(ctx, p, pc, connected, now)
}

// take deletes the pending connection of the callback's state and
// returns it with its sealed secret; an unknown or used state is refused.
// A stored row the domain's loader refuses is an internal error.
func (h *FinishConnectHandler) take(ctx context.Context, p ports.Principal, cb server.Callback) (pc *server.PendingConnection, sealed []byte, err error) {
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		pc, sealed, err = tx.OAuthStates().Take(ctx, cb.StateHash())
		return err
	})
	if errors.Is(err, ports.ErrNotFound) {
		return nil, nil, connectRefusal(server.ErrConnectionUsed)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("registry: finish connect: take the pending connection: %w", err)
	}
	return pc, sealed, nil
}

// client reads the server, refuses one whose credential is not the one
// the connection started over, opens it and returns the credential with
// the client the start pinned.
func (h *FinishConnectHandler) client(ctx context.Context, p ports.Principal, pc *server.PendingConnection, secret server.ConnectSecret) (*server.Server, server.Credential, error) {
	s, enc, err := readServer(ctx, h.d.Tenants, h.d.Allowed, p.TenantID, pc.ServerID())
	if err != nil {
		return nil, server.Credential{}, err
	}
	if err := pc.CheckCredential(s, enc); err != nil {
		return nil, server.Credential{}, connectRefusal(err)
	}
	cred, err := app.OpenCredential(h.d.Cipher, s.ID(), enc)
	if err != nil {
		return nil, server.Credential{}, app.KeysUnavailable(err)
	}
	client, err := pc.Client(cred, secret)
	if err != nil {
		return nil, server.Credential{}, connectRefusal(err)
	}
	return s, client, nil
}

// exchange trades the code at the pinned token endpoint and returns the
// client's credential connected with the answer.
func (h *FinishConnectHandler) exchange(ctx context.Context, pc *server.PendingConnection, s *server.Server, client server.Credential, secret server.ConnectSecret, cb server.Callback, actor string, now time.Time) (server.Credential, error) {
	o, _ := client.OAuth()
	tokens, err := h.d.OAuth.ExchangeCode(ctx, ports.OAuthCodeExchange{
		TokenURL: pc.TokenEndpoint(), ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientAuth: o.ClientAuth, Issuer: o.Issuer,
		Code: cb.Code(), Verifier: secret.Verifier, RedirectURI: pc.RedirectURI(), Resource: s.URL(),
	})
	if err != nil {
		return server.Credential{}, oauthFailure("OAuth code exchange", err)
	}
	connected, err := pc.Connection(client, server.Tokens{AccessToken: tokens.AccessToken, RefreshToken: tokens.RefreshToken, ExpiresAt: tokens.ExpiresAt}, actor, now)
	if err != nil {
		// The refresh token is not named: the field error's reason is fixed.
		return server.Credential{}, &app.Error{Code: app.CodeProtocolError, Message: "OAuth code exchange: the authorization server's answer is unusable", Cause: errors.New("connection refused by the domain")}
	}
	return connected, nil
}

// save seals the connected credential and stores it, only over the
// credential the connection started with (an admin's change during the
// exchange wins), with its server.connect event.
func (h *FinishConnectHandler) save(ctx context.Context, p ports.Principal, pc *server.PendingConnection, connected server.Credential, now time.Time) (*server.Server, error) {
	sealed, err := app.SealCredential(h.d.Cipher, pc.ServerID(), connected)
	if err != nil {
		return nil, err
	}
	var updated *server.Server
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		u, err := tx.Servers().Update(ctx, pc.ServerID(), func(s *server.Server) (ports.CredentialUpdate, error) {
			stored, err := tx.Servers().Credential(ctx, s.ID())
			if err != nil {
				return ports.CredentialUpdate{}, err
			}
			if err := pc.CheckCredential(s, stored); err != nil {
				return ports.CredentialUpdate{}, connectRefusal(err)
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
		return tx.Audit().Append(ctx, connectEvent(u, app.Actor(p), now))
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return updated, nil
}

// connectEvent is the server.connect audit event: the public part of the
// connection, never a secret.
func connectEvent(u *server.Server, actor string, now time.Time) ports.AuditEvent {
	v := u.OAuth()
	details := map[string]any{"authType": u.CredentialKind().String(), "clientId": v.ClientID, "scopes": append([]string{}, v.Scopes...), "issuer": v.Issuer}
	if hint := u.CredentialHint(); hint != "" {
		details["hint"] = hint
	}
	return ports.AuditEvent{Action: ActionServerConnect, Actor: actor, Target: u.ID(), At: now, Details: details}
}

// refused is the answer to a callback that cannot complete a connection.
func refused(field, reason string) error { return app.Invalid(map[string]string{field: reason}) }

// callbackRefusals are the answers to what server.PendingConnection and
// server.Callback refuse: validation_failed on the callback's field.
var callbackRefusals = []struct {
	err           error
	field, reason string
}{
	{server.ErrCallbackTooLong, "state", "the callback's parameters are too long"},
	{server.ErrStateRequired, "state", "is required"},
	{server.ErrConnectionUsed, "state", "is unknown or already used; connect again"},
	// A connection stored under another state's hash is answered as an
	// unknown state.
	{server.ErrStateMismatch, "state", "is unknown or already used; connect again"},
	{server.ErrOtherSession, "state", "belongs to another session; connect again"},
	{server.ErrConnectionExpired, "state", "has expired; connect again"},
	{server.ErrIssRequired, "iss", "is required by the authorization server's metadata"},
	{server.ErrIssMismatch, "iss", "is not the issuer the connection started with"},
	{server.ErrCodeRequired, "code", "is required"},
	{server.ErrConnectionCredentialChanged, "auth", "changed since the connection started; connect again"},
}

// connectRefusal maps a refusal of the pending connection to its answer;
// an authorization server's error code is repeated only when it is one of
// RFC 6749's plain codes. Other domain errors are mapped as the server's.
func connectRefusal(err error) error {
	var denied *server.AuthorizationDenied
	if errors.As(err, &denied) {
		reason := "the authorization server refused the connection"
		if denied.Code != "" {
			reason += " (" + denied.Code + ")"
		}
		return refused("error", reason)
	}
	for _, r := range callbackRefusals {
		if errors.Is(err, r.err) {
			return refused(r.field, r.reason)
		}
	}
	return srvDomainError(err)
}

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
