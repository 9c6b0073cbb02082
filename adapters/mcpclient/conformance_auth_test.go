package mcpclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
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

// conformanceDocumentURL is the client ID metadata document the suite's
// auth/basic-cimd expects as the client id; the service's is
// QUAVON_PUBLIC_URL + server.ClientMetadataPath, which the harness cannot
// publish where the suite looks.
const conformanceDocumentURL = "https://conformance-test.local/client-metadata.json"

// conformanceUnsupported are the auth scenarios whose grant this service
// does not implement; the client stops at once with the reason.
var conformanceUnsupported = map[string]string{
	"auth/cross-app-access-complete-flow":   "enterprise-managed authorization (token exchange, JWT bearer grant) is not supported",
	"auth/enterprise-managed-authorization": "enterprise-managed authorization (token exchange, JWT bearer grant) is not supported",
	"auth/wif-jwt-bearer":                   "the JWT bearer grant (workload identity) is not supported",
}

func applyConformanceAuth(scenario string, cctx conformanceContext, front *tlsFront, opts *Options, target *ports.MCPTarget) error {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil
	}
	if why, ok := conformanceUnsupported[scenario]; ok {
		return errors.New(why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	oc := NewOAuthClient(*opts)
	target.ServerID = "conformance"
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		md, err := oc.Discover(ctx, target.URL, "")
		if err != nil {
			return fmt.Errorf("Discover: %w", err)
		}
		secret, method := cctx.ClientSecret, ""
		if cctx.PrivateKeyPEM != "" {
			// private_key_jwt: the scenario's key stands in for the
			// instance's signing key ring.
			signer, err := newConformanceSigner(cctx.PrivateKeyPEM, front)
			if err != nil {
				return err
			}
			opts.Assertions, secret, method = signer, "", string(server.PrivateKeyJWT)
		}
		cred, err := server.NewOAuthClientCredentials(md.TokenEndpoint.String(), cctx.ClientID, secret, nil, method, md.Issuer)
		if err != nil {
			return fmt.Errorf("client credentials: %w", err)
		}
		target.Credential = cred
		return nil
	}
	cred, err := conformanceConnect(ctx, oc, cctx, *opts, target.URL, server.Credential{})
	if err != nil {
		return err
	}
	target.Credential = cred
	target.SaveCredential = func(context.Context, server.Credential) error { return nil }
	return nil
}

// conformanceConnect is the service's connection of a code-flow
// credential (app/registry StartConnect and FinishConnect), with the
// suite's mock /authorize in place of the browser. prev is the
// credential of an earlier connection (zero for the first): it binds the
// issuer, and when the server names another authorization server, a
// client the service obtained is obtained again there
// (server.Credential.ForNewIssuer), as StartConnect does.
func conformanceConnect(ctx context.Context, oc *OAuthClient, cctx conformanceContext, opts Options, serverURL server.URL, prev server.Credential) (server.Credential, error) {
	var none server.Credential
	cred, bound := prev, ""
	if o, ok := prev.OAuth(); ok {
		bound = o.Issuer
	}
	md, err := oc.Discover(ctx, serverURL, bound)
	if o, _ := prev.OAuth(); errors.Is(err, ports.ErrOAuthIssuer) && o.Registered {
		if cred, err = prev.ForNewIssuer(); err != nil {
			return none, err
		}
		bound = ""
		md, err = oc.Discover(ctx, serverURL, "")
	}
	if err != nil {
		return none, fmt.Errorf("Discover: %w", err)
	}
	opts.Logger.Info().Str("issuer", md.Issuer).Str("token", md.TokenEndpoint.String()).
		Str("authorization", md.AuthorizationEndpoint.String()).Str("registration", md.RegistrationEndpoint.String()).
		Bool("iss", md.IssParameterSupported).Strs("authMethods", md.TokenEndpointAuthMethods).Msg("discovered")
	as := md.AuthorizationServer()
	if err := as.CheckFor(bound); err != nil {
		return none, fmt.Errorf("authorization server: %w", err)
	}
	if cred.IsZero() || cred.Kind() != server.KindOAuthAuthorizationCode {
		issuer := ""
		if cctx.ClientID != "" {
			issuer = md.Issuer // the admin names the issuer of a pre-registered client
		}
		if cred, err = server.NewOAuthAuthorizationCode(cctx.ClientID, cctx.ClientSecret, issuer, nil, ""); err != nil {
			return none, fmt.Errorf("credential: %w", err)
		}
	}
	// StartConnect's client, in its order; the operator lists the issuer
	// for dynamic registration.
	o, _ := cred.OAuth()
	src, err := as.ClientSourceFor(o, conformanceDocumentURL, false, []string{md.Issuer})
	if err != nil {
		return none, fmt.Errorf("client: %w", err)
	}
	switch src {
	case server.ClientGiven:
		if err := as.CheckClientAuth(o.ClientAuth); err != nil {
			return none, err
		}
	case server.ClientFromDocument:
		cred, err = cred.WithRegisteredClient(conformanceDocumentURL, "", md.Issuer, server.DocumentAuth(false))
	default:
		var reg ports.OAuthRegistration
		if reg, err = oc.Register(ctx, md, conformanceRedirectURI, nil, as.RegistrationAuth()); err != nil {
			return none, fmt.Errorf("Register: %w", err)
		}
		cred, err = cred.WithRegisteredClient(reg.ClientID, reg.ClientSecret, md.Issuer, reg.ClientAuth)
	}
	if err != nil {
		return none, fmt.Errorf("client: %w", err)
	}
	o, _ = cred.OAuth()
	state, verifier := randomString(), randomString()
	challenge := sha256.Sum256([]byte(verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", o.ClientID)
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
		TokenURL: md.TokenEndpoint, ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientAuth: o.ClientAuth, Issuer: md.Issuer,
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

// conformanceSigner signs client assertions with a scenario's PKCS#8
// key, as the instance's signing key ring does (ES256). The TLS front
// shows the client the authorization server's https origin; the
// assertion's audience is mapped back to the server's own http origin,
// as the front maps every other URL the client sends (a signature cannot
// be rewritten on the way).
type conformanceSigner struct {
	key   *ecdsa.PrivateKey
	front *tlsFront
}

func newConformanceSigner(pemKey string, front *tlsFront) (*conformanceSigner, error) {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return nil, errors.New("private_key_pem: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("private_key_pem: not an ECDSA key")
	}
	return &conformanceSigner{key: ec, front: front}, nil
}

func (s *conformanceSigner) ClientAssertion(clientID, audience string) (string, error) {
	now := time.Now().Unix()
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": clientID, "sub": clientID, "aud": s.front.toServer(audience),
		"jti": randomString(), "iat": now, "exp": now + 60})
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(input))
	r, sv, err := ecdsa.Sign(rand.Reader, s.key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
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
