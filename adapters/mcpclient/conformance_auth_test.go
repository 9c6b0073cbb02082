package mcpclient

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The auth/* scenarios of the conformance suite (docs/conformance.md,
// "Auth scenarios"). applyConformanceAuth gives the target the credential
// an operator of this service would end up with, obtained the way the
// service obtains it, before the session opens:
//
//   - client credentials (auth/client-credentials-*): the admin gives
//     the client id and secret (the scenario's context); the token URL is
//     discovered here with OAuthClient.Discover, since the context names
//     none, and the credential is server.NewOAuthClientCredentials;
//   - everything else: the authorization-code connection of the service
//     (StartConnect and FinishConnect of app/registry), replicated:
//     Discover; Register when the scenario gives no client id (dynamic
//     registration); the authorization URL (response_type=code,
//     client_id, redirect_uri, state, PKCE S256, resource); the suite's
//     mock /authorize answers at once with a redirect, which is read
//     instead of followed (no browser); state and RFC 9207 iss checked as
//     the service checks them; ExchangeCode; the connected credential
//     (WithConnection: the refresh token and the pinned token URL; without
//     a refresh token, as the mock servers answer, WithAccessOnlyConnection:
//     the exchange's access token until it expires).
//
// The admin configures no scopes: the service requests exactly the
// credential's scopes and takes none from the server.

// conformanceRedirectURI is the client's callback. Nothing listens there:
// the client reads the code from the mock's redirect. It is https and on
// no terminator's port, so the terminators leave it alone.
const conformanceRedirectURI = "https://" + everythingHost + "/oauth/callback"

// conformanceUnsupported are the auth scenarios whose client
// authentication this service does not implement; the client stops at
// once with the reason.
var conformanceUnsupported = map[string]string{
	"auth/client-credentials-jwt":           "private_key_jwt client authentication is not supported (client_secret_basic only)",
	"auth/cross-app-access-complete-flow":   "enterprise-managed authorization (token exchange, JWT bearer grant) is not supported",
	"auth/enterprise-managed-authorization": "enterprise-managed authorization (token exchange, JWT bearer grant) is not supported",
	"auth/wif-jwt-bearer":                   "the JWT bearer grant (workload identity) is not supported",
}

func applyConformanceAuth(scenario string, cctx conformanceContext, opts *Options, target *ports.MCPTarget) error {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil
	}
	if why, ok := conformanceUnsupported[scenario]; ok {
		return errors.New(why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	oc := NewOAuthClient(*opts)
	md, err := oc.Discover(ctx, target.URL, "")
	if err != nil {
		return fmt.Errorf("Discover: %w", err)
	}
	opts.Logger.Info().Str("issuer", md.Issuer).Str("token", md.TokenEndpoint.String()).
		Str("authorization", md.AuthorizationEndpoint.String()).Str("registration", md.RegistrationEndpoint.String()).
		Bool("iss", md.IssParameterSupported).Msg("discovered")
	target.ServerID = "conformance"
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		cred, err := server.NewOAuthClientCredentials(md.TokenEndpoint.String(), cctx.ClientID, cctx.ClientSecret, nil, "")
		if err != nil {
			return fmt.Errorf("client credentials: %w", err)
		}
		target.Credential = cred
		return nil
	}
	cred, err := conformanceConnect(ctx, oc, md, cctx, *opts, target.URL)
	if err != nil {
		return err
	}
	target.Credential = cred
	target.SaveCredential = func(context.Context, server.Credential) error { return nil }
	return nil
}

// conformanceConnect is the service's connection of a code-flow
// credential (app/registry StartConnect and FinishConnect), with the
// suite's mock /authorize in place of the browser.
func conformanceConnect(ctx context.Context, oc *OAuthClient, md ports.OAuthMetadata, cctx conformanceContext, opts Options, serverURL server.URL) (server.Credential, error) {
	var none server.Credential
	// StartConnect's check of the authorization server (PKCE S256
	// announced among them).
	as := server.AuthorizationServer{
		Issuer: md.Issuer, AuthorizationEndpoint: md.AuthorizationEndpoint, TokenEndpoint: md.TokenEndpoint,
		RegistrationEndpoint: md.RegistrationEndpoint, IssParameterSupported: md.IssParameterSupported,
		CodeChallengeMethods: md.CodeChallengeMethods,
	}
	if err := as.CheckFor(""); err != nil {
		return none, fmt.Errorf("authorization server: %w", err)
	}
	clientID, secret := cctx.ClientID, cctx.ClientSecret
	if clientID == "" {
		if md.RegistrationEndpoint.IsZero() {
			return none, errors.New("no client id and the authorization server offers no dynamic client registration")
		}
		var err error
		if clientID, secret, err = oc.Register(ctx, md, conformanceRedirectURI, nil); err != nil {
			return none, fmt.Errorf("Register: %w", err)
		}
	}
	cred, err := server.NewOAuthAuthorizationCode(clientID, secret, md.Issuer, nil, "")
	if err != nil {
		return none, fmt.Errorf("credential: %w", err)
	}
	state, verifier := randomString(), randomString()
	challenge := sha256.Sum256([]byte(verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", clientID)
	q.Set("redirect_uri", conformanceRedirectURI)
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", serverURL.String())
	cb, err := conformanceAuthorize(ctx, opts, md.AuthorizationEndpoint.String()+"?"+q.Encode())
	if err != nil {
		return none, err
	}
	// FinishConnect's checks, in its order.
	switch iss := cb.Get("iss"); {
	case cb.Get("state") != state:
		return none, errors.New("callback: state is not the one sent")
	case cb.Get("error") != "":
		return none, errors.New("callback: the authorization server refused the connection")
	case md.IssParameterSupported && !cb.Has("iss"):
		return none, errors.New("callback: iss is required by the authorization server's metadata (RFC 9207)")
	case iss != "" && iss != md.Issuer:
		return none, errors.New("callback: iss is not the issuer the connection started with (RFC 9207)")
	case cb.Get("code") == "":
		return none, errors.New("callback: code is required")
	}
	tokens, err := oc.ExchangeCode(ctx, ports.OAuthCodeExchange{
		TokenURL: md.TokenEndpoint, ClientID: clientID, ClientSecret: secret,
		Code: cb.Get("code"), Verifier: verifier, RedirectURI: conformanceRedirectURI, Resource: serverURL,
	})
	if err != nil {
		return none, fmt.Errorf("ExchangeCode: %w", err)
	}
	now := time.Now()
	if tokens.RefreshToken == "" {
		// FinishConnect: the access token until it expires (an hour
		// when the answer names no expiry).
		exp := tokens.ExpiresAt
		if exp.IsZero() {
			exp = now.Add(time.Hour)
		}
		return cred.WithAccessOnlyConnection(md.Issuer, md.TokenEndpoint, tokens.AccessToken, exp, "conformance", now)
	}
	return cred.WithConnection(md.Issuer, md.TokenEndpoint, tokens.RefreshToken, "conformance", now)
}

// conformanceAuthorize plays the browser: it GETs the authorization URL
// and returns the query of the redirect to the client's callback, without
// following it.
func conformanceAuthorize(ctx context.Context, opts Options, authURL string) (url.Values, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	hc := &http.Client{
		Transport: &http.Transport{
			Proxy:           nil,
			TLSClientConfig: &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, port, err := net.SplitHostPort(addr)
				if err != nil || host != everythingHost {
					return nil, fmt.Errorf("authorize: %s is not the loopback host", addr)
				}
				return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       opts.Timeout,
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorize: %w", err)
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode/100 != 3 || err != nil {
		return nil, fmt.Errorf("authorize: status %d, no redirect", resp.StatusCode)
	}
	if loc.Scheme+"://"+loc.Host+loc.Path != conformanceRedirectURI {
		return nil, errors.New("authorize: the redirect is not to the client's callback")
	}
	return loc.Query(), nil
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
