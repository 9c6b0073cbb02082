package registry

import (
	"context"
	"errors"
	"net/netip"
	"slices"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// ServerDeps are the ports and settings the server registration use cases
// share.
type ServerDeps struct {
	Tenants ports.Tenants
	// Cipher seals credentials. An empty key ring is fine until a
	// credential is given: then the request fails with keys_unavailable.
	Cipher app.Vault
	// Resolver looks up a URL's host for the save-time address check (MC1).
	Resolver ports.Resolver
	Clock    ports.Clock
	Gates    app.Gates
	// Rules are the instance's address rules (edition and private hosts).
	Rules netpolicy.Rules
	// NewID returns a new lowercase canonical UUID for a server.
	NewID ports.NewID
	// Allowed is the operator's allowlist of server URLs
	// (QUAVON_MCP_ALLOWED_URLS); the zero value allows any URL.
	Allowed server.AllowedURLs
	// CallCap is the instance's cap of a server's maxCallsPerMinute
	// (QUAVON_MCP_MAX_CALLS_PER_MINUTE); the zero value is 600.
	CallCap server.CallCap
}

// callLimit reads maxCallsPerMinute (nil: none) under the instance's
// cap: a field error on maxCallsPerMinute when it is out of range or
// above the cap.
func (d ServerDeps) callLimit(perMinute *int) (server.CallLimit, error) {
	l, err := server.ParseCallLimit(perMinute)
	if err != nil {
		return server.CallLimit{}, err
	}
	return l, d.CallCap.Check(l)
}

// ServerAuth is the auth object of a create or patch request. Type is
// "none", "bearer" (Token), "header" (Name and Value),
// "oauth_client_credentials" (TokenURL, ClientID, ClientSecret, Scopes) or
// "oauth_authorization_code" (ClientID, optional ClientSecret, Scopes; an
// empty ClientID asks for dynamic client registration at connection).
type ServerAuth struct {
	Type         string
	Token        string
	Name         string
	Value        string
	TokenURL     string
	ClientID     string
	ClientSecret string
	// ClientAuth is how the client authenticates at the token endpoint
	// (server.ParseClientAuth; empty: the default of the secret).
	ClientAuth string
	// Issuer is the code flow's authorization server (required with a
	// client secret or private_key_jwt).
	Issuer string
	// Scopes nil means the field was absent.
	Scopes []string
}

// Audit actions (GET /v1/audit). Discovery and the allowlist save have
// theirs in discovery.go, the code-flow connection in connect.go.
const (
	ActionServerCreate = "server.create"
	ActionServerUpdate = "server.update"
	ActionServerDelete = "server.delete"
)

// credential builds the domain credential. Fields that do not belong to
// the type are refused rather than ignored, so a client that meant another
// type learns it.
func (a ServerAuth) credential() (server.Credential, error) {
	kind, err := server.ParseCredentialKind(a.Type)
	if err != nil {
		return server.Credential{}, err
	}
	set := map[string]bool{
		"auth.token": a.Token != "", "auth.name": a.Name != "", "auth.value": a.Value != "",
		"auth.tokenUrl": a.TokenURL != "", "auth.clientId": a.ClientID != "",
		"auth.clientSecret": a.ClientSecret != "", "auth.scopes": a.Scopes != nil, "auth.issuer": a.Issuer != "",
		"auth.clientAuth": a.ClientAuth != "",
	}
	var allowed []string
	switch kind {
	case server.KindBearer:
		allowed = []string{"auth.token"}
	case server.KindHeader:
		allowed = []string{"auth.name", "auth.value"}
	case server.KindOAuthClientCredentials:
		allowed = []string{"auth.tokenUrl", "auth.clientId", "auth.clientSecret", "auth.scopes", "auth.clientAuth", "auth.issuer"}
	case server.KindOAuthAuthorizationCode:
		allowed = []string{"auth.clientId", "auth.clientSecret", "auth.scopes", "auth.issuer", "auth.clientAuth"}
	}
	// In a fixed order, so the same request names the same field.
	for _, name := range []string{"auth.token", "auth.name", "auth.value", "auth.tokenUrl", "auth.clientId", "auth.clientSecret", "auth.scopes", "auth.issuer", "auth.clientAuth"} {
		if set[name] && !slices.Contains(allowed, name) {
			return server.Credential{}, &field.Error{Field: name, Reason: "must be empty for auth type " + kind.String()}
		}
	}
	switch kind {
	case server.KindBearer:
		return server.NewBearer(a.Token)
	case server.KindHeader:
		return server.NewHeader(a.Name, a.Value)
	case server.KindOAuthClientCredentials:
		return server.NewOAuthClientCredentials(a.TokenURL, a.ClientID, a.ClientSecret, a.Scopes, a.ClientAuth, a.Issuer)
	case server.KindOAuthAuthorizationCode:
		return server.NewOAuthAuthorizationCode(a.ClientID, a.ClientSecret, a.Issuer, a.Scopes, a.ClientAuth)
	}
	return server.NoCredential(), nil
}

// checkTokenURL is the save-time address check of a client-credentials
// token URL and of a code flow's issuer: the same rules as the server's own URL (MC1), answered with
// the same endpoint_not_public. The transport checks again on every
// token request.
func (d ServerDeps) checkTokenURL(ctx context.Context, cred server.Credential) error {
	o, ok := cred.OAuth()
	if !ok {
		return nil
	}
	if o.Issuer != "" {
		// The code flow's issuer: its metadata is fetched from there.
		iu, err := server.ParseURL(o.Issuer)
		if err != nil {
			return app.Invalid(map[string]string{"auth.issuer": "must be an https URL"})
		}
		if err := d.checkEndpoint(ctx, iu); err != nil {
			return err
		}
	}
	if o.TokenURL.IsZero() {
		return nil
	}
	return d.checkEndpoint(ctx, o.TokenURL)
}

// srvFieldErrors collects domain field errors into one validation_failed.
type srvFieldErrors map[string]string

// add records err if it is a *field.Error and reports whether err
// was nil or recorded; any other error is left to the caller.
func (f srvFieldErrors) add(err error) bool {
	if err == nil {
		return true
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		if _, dup := f[fe.Field]; !dup {
			f[fe.Field] = fe.Reason
		}
		return true
	}
	return false
}

func (f srvFieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	return app.Invalid(f)
}

// checkEndpoint is the save-time address check of MC1: every address of
// the URL's host must pass the instance's rules; an IP literal is judged
// as it is. A host that does not resolve (lookup error or no address) is
// refused as endpoint_not_public too: an address we cannot see is not
// known to be public, and netpolicy already treats "no address" as
// blocked. Neither the message nor the cause names the URL or the host.
// The guarded dialer repeats the check on every connection (DNS rebinding).
func (d ServerDeps) checkEndpoint(ctx context.Context, u server.URL) error {
	var addrs []netip.Addr
	if u.IsIPLiteral() {
		a, err := netip.ParseAddr(u.Host())
		if err != nil {
			return srvEndpointNotPublic(netpolicy.ReasonNoAddress)
		}
		addrs = []netip.Addr{a}
	} else {
		if d.Resolver == nil {
			return srvEndpointNotPublic(netpolicy.ReasonNoAddress)
		}
		ctx, cancel := context.WithTimeout(ctx, limits.CallTimeout)
		defer cancel()
		found, err := d.Resolver.LookupNetIP(ctx, "ip", u.Host())
		if err != nil {
			// The resolver's error names the host: it is dropped, not kept as cause.
			return srvEndpointNotPublic(netpolicy.ReasonNoAddress)
		}
		addrs = found
	}
	if err := d.Rules.CheckAll(u.Host(), addrs); err != nil {
		var be *netpolicy.BlockedError
		if errors.As(err, &be) {
			return srvEndpointNotPublic(be.Reason)
		}
		return srvEndpointNotPublic(netpolicy.ReasonForbidden)
	}
	return nil
}

// srvEndpointNotPublic answers every refusal with one fixed message: the
// reason (private, never allowed, no address) would tell a tenant admin
// what the instance's DNS says about internal names. It stays in the
// cause, for the debug log only.
func srvEndpointNotPublic(r netpolicy.Reason) error {
	return &app.Error{
		Code:    app.CodeEndpointNotPublic,
		Message: "the URL's host does not resolve to public addresses only",
		Cause:   errors.New("endpoint refused: " + r.String()),
	}
}

// srvStoreError maps the store's sentinel errors to the contract's codes and
// passes *Error through.
func srvStoreError(err error) error {
	var e *app.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, ports.ErrNotFound):
		return app.Fail(app.CodeNotFound, "no such MCP server")
	case errors.Is(err, ports.ErrNameTaken):
		return app.Fail(app.CodeNameTaken, "a server with this name already exists in the tenant")
	case errors.Is(err, ports.ErrTooManyServers):
		return app.Fail(app.CodeTooManyServers, "the tenant already has the maximum number of MCP servers")
	}
	return err
}

// srvDomainError maps the server entity's errors.
func srvDomainError(err error) error {
	f := srvFieldErrors{}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, server.ErrAcknowledgementRequired):
		return app.Fail(app.CodeAcknowledgementRequired, "the data-sharing acknowledgement is required (\"acknowledged\": true)")
	case errors.Is(err, server.ErrCredentialRequired):
		return app.Fail(app.CodeCredentialRequired, "moving a server with a credential to another host, or an OAuth server to another URL, needs the credential again (\"auth\")")
	case f.add(err):
		return f.err()
	}
	return err
}

// serverID normalises a path id; anything but a UUID is not_found, like
// an id of another tenant, so the store never sees a malformed id.
func srvParseID(raw string) (string, error) {
	canonical, ok := id.Parse(raw)
	if !ok {
		return "", app.Fail(app.CodeNotFound, "no such MCP server")
	}
	return canonical, nil
}

// srvAuditDetails are the create event's details: never the URL or a secret.
func srvAuditDetails(s *server.Server) map[string]any {
	d := map[string]any{"name": s.Name().String(), "authType": s.CredentialKind().String()}
	if h := s.CredentialHint(); h != "" {
		d["hint"] = h
	}
	if s.CredentialKind().IsOAuth() {
		v := s.OAuth()
		d["clientId"], d["scopes"] = v.ClientID, append([]string{}, v.Scopes...)
	}
	if n, ok := s.MaxCallsPerMinute().PerMinute(); ok {
		d["maxCallsPerMinute"] = n
	}
	return d
}
