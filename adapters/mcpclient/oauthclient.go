package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// OAuthClient makes the requests of the authorization-code connection
// (discovery, dynamic client registration, the code exchange) through the
// guarded transport, each to its own origin with the same rules as an MCP
// server: https only, the address rules, no redirects,
// MaxOAuthResponseBytes, the timeout. It implements [ports.OAuthClient].
type OAuthClient struct {
	opts Options
	// connect, when set, replaces the socket dial (tests only).
	connect func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error)
}

var _ ports.OAuthClient = (*OAuthClient)(nil)

// NewOAuthClient returns an OAuthClient with the defaults of [Options]
// applied (Metrics is not used).
func NewOAuthClient(opts Options) *OAuthClient {
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Timeout <= 0 {
		opts.Timeout = limits.CallTimeout
	}
	return &OAuthClient{opts: opts}
}

func (c *OAuthClient) egress() egress { return egress{opts: c.opts, connect: c.connect} }

// failed logs f's cause at debug level and returns its code alone.
func (c *OAuthClient) failed(ctx context.Context, what string, f *failure) error {
	c.opts.Logger.Debug().Err(f.cause).Str("code", f.code.Error()).Str("step", what).Msg("oauth request failed")
	return &codedError{code: f.code, ctxErr: ctx.Err()}
}

func metadataError(why string) *failure { return fail(ports.ErrOAuthMetadata, errors.New(why)) }

// initializeProbe is the unauthenticated MCP request whose 401 names the
// protected-resource metadata (RFC 9728 §5.1).
const initializeProbe = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codelotse","version":"1"}}}`

// Discover implements [ports.OAuthClient]: the protected-resource
// metadata named by the server's 401 challenge (resource_metadata), else
// at its well-known URLs; its resource must equal serverURL; then the
// first authorization server's RFC 8414 metadata, else its OpenID
// configuration (RFC 8414 §3.1 path insertion, then OpenID's appending),
// whose issuer must equal the URL it was fetched for. The token,
// authorization and registration endpoints must be https URLs whose hosts
// pass the address rules now (and are checked again when used).
func (c *OAuthClient) Discover(ctx context.Context, serverURL server.URL, issuer string) (ports.OAuthMetadata, error) {
	md, f := c.discover(ctx, serverURL, issuer)
	if f != nil {
		return ports.OAuthMetadata{}, c.failed(ctx, "discover", f)
	}
	return md, nil
}

// resourceMetadataURLs are where the server's protected-resource
// metadata may be: the resource_metadata of its 401 challenge to an
// initialize probe, or else RFC 9728's well-known URLs on its origin.
func (c *OAuthClient) resourceMetadataURLs(ctx context.Context, serverURL server.URL) ([]string, *failure) {
	probe, f := c.egress().send(ctx, oauthRequest{
		method: http.MethodPost, url: serverURL, jsonBody: []byte(initializeProbe),
		header: map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
	})
	if f != nil && !errors.Is(f, ports.ErrResponseTooLarge) {
		return nil, f
	}
	if probe != nil && probe.status == http.StatusUnauthorized {
		// Followed only on the server's own origin (MC13): a challenge
		// that points elsewhere is ignored for the well-known URLs.
		if rm := resourceMetadataURL(probe.header.Values("WWW-Authenticate")); rm != "" && sameOrigin(rm, serverURL.Origin()) {
			return []string{rm}, nil
		}
	}
	return wellKnownResourceURLs(serverURL), nil
}

func (c *OAuthClient) discover(ctx context.Context, serverURL server.URL, want string) (ports.OAuthMetadata, *failure) {
	if serverURL.IsZero() {
		return ports.OAuthMetadata{}, metadataError("no server URL")
	}
	candidates, f := c.resourceMetadataURLs(ctx, serverURL)
	if f != nil {
		return ports.OAuthMetadata{}, f
	}
	prm, f := c.protectedResource(ctx, candidates, serverURL.String())
	if f != nil {
		return ports.OAuthMetadata{}, f
	}
	if len(prm.AuthorizationServers) == 0 {
		return ports.OAuthMetadata{}, metadataError("protected-resource metadata names no authorization server")
	}
	issuer := prm.AuthorizationServers[0]
	if want != "" {
		// The credential is bound to this issuer: the server must name
		// it, and nothing goes to another (never a silent switch).
		if !slices.Contains(prm.AuthorizationServers, want) {
			return ports.OAuthMetadata{}, fail(ports.ErrOAuthIssuer, errors.New("the server names another authorization server"))
		}
		issuer = want
	}
	asm, f := c.authServer(ctx, issuer)
	if f != nil {
		return ports.OAuthMetadata{}, f
	}
	md := ports.OAuthMetadata{
		Resource:              prm.Resource,
		Issuer:                asm.Issuer,
		ScopesSupported:       slices.Clone(prm.ScopesSupported),
		IssParameterSupported: asm.AuthorizationResponseIssParameterSupported,
		CodeChallengeMethods:  slices.Clone(asm.CodeChallengeMethodsSupported),
		// A list read as it came: absent stays nil (RFC 8414's default).
		TokenEndpointAuthMethods:  slices.Clone(asm.TokenEndpointAuthMethodsSupported),
		ClientIDMetadataDocuments: asm.ClientIDMetadataDocumentSupported,
	}
	if len(md.ScopesSupported) == 0 {
		md.ScopesSupported = slices.Clone(asm.ScopesSupported)
	}
	if md.AuthorizationEndpoint, f = c.endpoint(ctx, asm.AuthorizationEndpoint, true); f != nil {
		return ports.OAuthMetadata{}, f
	}
	if md.TokenEndpoint, f = c.endpoint(ctx, asm.TokenEndpoint, true); f != nil {
		return ports.OAuthMetadata{}, f
	}
	if md.RegistrationEndpoint, f = c.endpoint(ctx, asm.RegistrationEndpoint, false); f != nil {
		return ports.OAuthMetadata{}, f
	}
	// The code, a client secret and the refresh token go to the token
	// endpoint, a registration to the registration endpoint: both must be
	// on the issuer's own origin, the one the admin named or confirmed.
	iu, _ := server.ParseURL(issuer) // parsed by authServer
	if md.TokenEndpoint.Origin() != iu.Origin() ||
		(!md.RegistrationEndpoint.IsZero() && md.RegistrationEndpoint.Origin() != iu.Origin()) {
		return ports.OAuthMetadata{}, fail(ports.ErrOAuthIssuer, errors.New("an endpoint is not on the issuer's origin"))
	}
	return md, nil
}

// resourceMetadataURL is the resource_metadata parameter of the first
// Bearer challenge that has one (RFC 9728 §5.1), or "". The parsing is
// the go-sdk's.
func resourceMetadataURL(headers []string) string {
	challenges, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return ""
	}
	for _, ch := range challenges {
		if ch.Scheme == "bearer" && ch.Params["resource_metadata"] != "" {
			return ch.Params["resource_metadata"]
		}
	}
	return ""
}

// sameOrigin reports whether raw is an https URL on origin.
func sameOrigin(raw, origin string) bool {
	u, err := server.ParseURL(raw)
	return err == nil && u.Origin() == origin
}

// wellKnownResourceURLs are RFC 9728 §3.1's URL (the well-known suffix
// inserted between the host and the path), then the root one when the
// server URL has a path.
func wellKnownResourceURLs(u server.URL) []string {
	const suffix = "/.well-known/oauth-protected-resource"
	p := strings.TrimSuffix(u.Path(), "/")
	out := []string{u.Origin() + suffix + p}
	if p != "" {
		out = append(out, u.Origin()+suffix)
	}
	return out
}

// authServerMetadataURLs are the metadata URLs of an issuer: RFC 8414
// §3.1 (the suffix inserted before the path, its trailing "/" removed),
// then OpenID Connect Discovery inserted the same way, then appended to
// the path (OpenID Connect Discovery 1.0 §4).
func authServerMetadataURLs(issuer server.URL) []string {
	p := strings.TrimSuffix(issuer.Path(), "/")
	o := issuer.Origin()
	out := []string{o + "/.well-known/oauth-authorization-server" + p, o + "/.well-known/openid-configuration" + p}
	if p != "" {
		out = append(out, o+p+"/.well-known/openid-configuration")
	}
	return out
}

// getJSON fetches a metadata document. found is false for a 404 (or
// another 4xx: try the next URL); a document that is not a JSON object is
// ErrOAuthMetadata.
func (c *OAuthClient) getJSON(ctx context.Context, raw string, v any) (found bool, _ *failure) {
	u, err := server.ParseURL(raw)
	if err != nil {
		return false, metadataError("metadata URL is not an https URL without query")
	}
	resp, f := c.egress().send(ctx, oauthRequest{method: http.MethodGet, url: u})
	if f != nil {
		return false, f
	}
	switch {
	case resp.status == http.StatusOK:
	case resp.status >= 400 && resp.status < 500:
		return false, nil
	default:
		return false, fail(ports.ErrServerUnreachable, fmt.Errorf("metadata status %d", resp.status))
	}
	if err := json.Unmarshal(resp.body, v); err != nil {
		return false, metadataError("metadata is not a JSON object")
	}
	return true, nil
}

func (c *OAuthClient) protectedResource(ctx context.Context, candidates []string, resource string) (*oauthex.ProtectedResourceMetadata, *failure) {
	for _, raw := range candidates {
		var prm oauthex.ProtectedResourceMetadata
		found, f := c.getJSON(ctx, raw, &prm)
		if f != nil {
			return nil, f
		}
		if !found {
			continue
		}
		// RFC 9728 §3.3: the resource must be the one asked for.
		if prm.Resource != resource {
			return nil, metadataError("protected-resource metadata names another resource")
		}
		return &prm, nil
	}
	return nil, metadataError("no protected-resource metadata")
}

func (c *OAuthClient) authServer(ctx context.Context, issuer string) (*oauthex.AuthServerMeta, *failure) {
	iu, err := server.ParseURL(issuer)
	if err != nil {
		return nil, metadataError("authorization server is not an https URL without query")
	}
	for _, raw := range authServerMetadataURLs(iu) {
		var asm oauthex.AuthServerMeta
		found, f := c.getJSON(ctx, raw, &asm)
		if f != nil {
			return nil, f
		}
		if !found {
			continue
		}
		// RFC 8414 §3.3: the issuer must be identical to the one the
		// metadata was fetched for (mix-up defence).
		if asm.Issuer != issuer {
			return nil, metadataError("authorization server metadata names another issuer")
		}
		return &asm, nil
	}
	return nil, metadataError("no authorization server metadata")
}

// endpoint parses an endpoint of the metadata (https, no query) and
// checks its host against the address rules now.
func (c *OAuthClient) endpoint(ctx context.Context, raw string, required bool) (server.URL, *failure) {
	if raw == "" {
		if required {
			return server.URL{}, metadataError("metadata lacks a required endpoint")
		}
		return server.URL{}, nil
	}
	u, err := server.ParseURL(raw)
	if err != nil {
		return server.URL{}, metadataError("endpoint is not an https URL without query")
	}
	if f := checkAddress(ctx, c.opts, u); f != nil {
		return server.URL{}, f
	}
	return u, nil
}

// checkAddress resolves u's host and checks every address with the rules,
// without connecting.
func checkAddress(ctx context.Context, o Options, u server.URL) *failure {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(u.Host()); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		addrs, err = o.Resolver.LookupNetIP(lctx, "ip", u.Host())
		if err != nil {
			if lctx.Err() != nil {
				return fail(ports.ErrTimeout, err)
			}
			return fail(ports.ErrServerUnreachable, err)
		}
	}
	if err := o.Rules.CheckAll(u.Host(), addrs); err != nil {
		return fail(ports.ErrAddressBlocked, fmt.Errorf("%w (resolved %v)", err, addrs))
	}
	return nil
}

// Register implements [ports.OAuthClient]: RFC 7591 dynamic client
// registration of a web client (application_type web) with the code and
// refresh-token grants for redirectURI, asking for the method auth. The
// registered method is the answer's token_endpoint_auth_method when it
// is one this client has and fits the answer (a secret with
// client_secret_basic or client_secret_post, none without), else auth. A
// 4xx is ErrOAuthRejected.
func (c *OAuthClient) Register(ctx context.Context, md ports.OAuthMetadata, redirectURI string, scopes []string, auth server.ClientAuth) (ports.OAuthRegistration, error) {
	r, f := c.register(ctx, md, redirectURI, scopes, auth)
	if f != nil {
		return ports.OAuthRegistration{}, c.failed(ctx, "register", f)
	}
	return r, nil
}

func (c *OAuthClient) register(ctx context.Context, md ports.OAuthMetadata, redirectURI string, scopes []string, auth server.ClientAuth) (ports.OAuthRegistration, *failure) {
	var none ports.OAuthRegistration
	if md.RegistrationEndpoint.IsZero() {
		return none, metadataError("no registration endpoint")
	}
	if auth == "" {
		auth = server.ClientSecretBasic
	}
	meta := map[string]any{
		"redirect_uris":              []string{redirectURI},
		"client_name":                clientName,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": string(auth),
		// SEP-837 (MCP 2026-07-28) requires an application_type; this
		// service is a web application with an https redirect URI
		// (OpenID Connect Dynamic Client Registration §2).
		"application_type": "web",
	}
	if len(scopes) > 0 {
		meta["scope"] = strings.Join(scopes, " ")
	}
	body, err := json.Marshal(meta)
	if err != nil {
		return none, fail(ports.ErrProtocol, err)
	}
	resp, f := c.egress().send(ctx, oauthRequest{method: http.MethodPost, url: md.RegistrationEndpoint, jsonBody: body})
	if f != nil {
		return none, f
	}
	if resp.status >= 400 && resp.status < 500 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(resp.body, &e)
		return none, fail(ports.ErrOAuthRejected, &tokenError{status: resp.status, code: knownCode(e.Error)})
	}
	if resp.status != http.StatusOK && resp.status != http.StatusCreated {
		return none, fail(ports.ErrServerUnreachable, fmt.Errorf("registration status %d", resp.status))
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(resp.body, &r); err != nil || !visibleASCII(r.ClientID) || (r.ClientSecret != "" && !visibleASCII(r.ClientSecret)) {
		return none, fail(ports.ErrProtocol, errors.New("malformed registration response"))
	}
	reg := ports.OAuthRegistration{ClientID: r.ClientID, ClientSecret: r.ClientSecret, ClientAuth: auth}
	if m := server.ClientAuth(r.Method); m.UsesSecret() && r.ClientSecret != "" || m == server.ClientAuthNone && r.ClientSecret == "" {
		reg.ClientAuth = m
	}
	if reg.ClientAuth.UsesSecret() != (reg.ClientSecret != "") {
		// The answer and the method disagree (a secret for a public
		// client, or none for a confidential one): the default of the
		// secret it gave.
		reg.ClientAuth, _ = server.ParseClientAuth("", reg.ClientSecret != "")
	}
	return reg, nil
}

// ExchangeCode implements [ports.OAuthClient]: the authorization_code
// grant with code_verifier, redirect_uri and resource, at req.TokenURL
// only; the client authenticates by req.ClientAuth (clientAuth).
// A refusal (invalid_grant for an expired or replayed code,
// invalid_client) is ErrOAuthRejected; a 200 that is no bearer token
// response is ErrProtocol.
func (c *OAuthClient) ExchangeCode(ctx context.Context, req ports.OAuthCodeExchange) (ports.OAuthTokens, error) {
	t, f := c.exchange(ctx, req)
	if f != nil {
		return ports.OAuthTokens{}, c.failed(ctx, "exchange", f)
	}
	return t, nil
}

func (c *OAuthClient) exchange(ctx context.Context, req ports.OAuthCodeExchange) (ports.OAuthTokens, *failure) {
	if req.TokenURL.IsZero() || req.Resource.IsZero() {
		return ports.OAuthTokens{}, metadataError("no token URL or resource")
	}
	r := oauthRequest{method: http.MethodPost, url: req.TokenURL, form: url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {req.Code},
		"code_verifier": {req.Verifier},
		"redirect_uri":  {req.RedirectURI},
		"resource":      {req.Resource.String()},
	}}
	if f := clientAuth(&r, req.ClientID, req.ClientSecret, req.Issuer, req.ClientAuth, c.opts.Assertions); f != nil {
		return ports.OAuthTokens{}, f
	}
	resp, f := c.egress().send(ctx, r)
	if f != nil {
		return ports.OAuthTokens{}, f
	}
	ans, err := parseTokenResponse(resp.status, resp.body)
	if err != nil {
		var te *tokenError
		switch {
		case errors.As(err, &te) && te.status < 500:
			return ports.OAuthTokens{}, fail(ports.ErrOAuthRejected, te)
		case errors.As(err, &te):
			return ports.OAuthTokens{}, fail(ports.ErrServerUnreachable, te)
		}
		return ports.OAuthTokens{}, fail(ports.ErrProtocol, err)
	}
	t := ports.OAuthTokens{AccessToken: ans.access, RefreshToken: ans.refresh}
	if ans.expiresIn > 0 {
		t.ExpiresAt = time.Now().Add(ans.expiresIn)
	}
	return t, nil
}
