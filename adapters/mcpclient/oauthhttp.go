package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// MaxOAuthResponseBytes caps every response of an authorization server
// (token, registration and metadata responses) and the 401 answer of a
// server whose challenge discovery reads.
const MaxOAuthResponseBytes = 64 << 10

// oauthRequest is one request to an authorization server or a metadata
// URL. It goes through a guard of its own for the URL's origin: https
// only, the address rules, no redirects, the timeout and
// MaxOAuthResponseBytes. No credential header is added; a client secret
// travels only as the Basic authorization of the request that needs it.
type oauthRequest struct {
	method string
	url    server.URL
	// form or jsonBody is the body (at most one).
	form     url.Values
	jsonBody []byte
	header   map[string]string
	// basic, when set, is client_secret_basic (RFC 6749 §2.3.1: id and
	// secret form-urlencoded, then base64).
	basic *[2]string
}

type oauthResponse struct {
	status int
	header http.Header
	body   []byte
}

// egress sends oauthRequests through the guard. It holds nothing between
// requests: each has its own transport and connection.
type egress struct {
	opts    Options
	connect func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error)
}

func (e egress) send(ctx context.Context, r oauthRequest) (*oauthResponse, *failure) {
	g := newGuard(e.opts, ports.MCPTarget{URL: r.url, Credential: server.NoCredential()}, MaxOAuthResponseBytes)
	if e.connect != nil {
		g.connect = e.connect
	}
	hc, tr := g.httpClient(e.opts.RootCAs)
	defer tr.CloseIdleConnections()
	ctx, rec := withRecorder(ctx)

	var body io.Reader
	switch {
	case r.form != nil:
		body = strings.NewReader(r.form.Encode())
	case r.jsonBody != nil:
		body = bytes.NewReader(r.jsonBody)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url.String(), body)
	if err != nil {
		return nil, fail(ports.ErrProtocol, errors.New("unusable oauth request"))
	}
	switch {
	case r.form != nil:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case r.jsonBody != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.basic != nil {
		cred := url.QueryEscape(r.basic[0]) + ":" + url.QueryEscape(r.basic[1])
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, e.failure(ctx, rec, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, e.failure(ctx, rec, err)
	}
	return &oauthResponse{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// failure is what the guard recorded for the request, else the context's
// or the network's failure. Never the URL's text in the code.
func (e egress) failure(ctx context.Context, rec *recorder, err error) *failure {
	if f := rec.get(); f != nil {
		return f
	}
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	if ctx.Err() != nil {
		return fail(ports.ErrTimeout, err)
	}
	return fail(ports.ErrServerUnreachable, err)
}

// tokenAnswer is a successful token response.
type tokenAnswer struct {
	access    string
	refresh   string
	expiresIn time.Duration // zero when the server did not say
}

// tokenError is an authorization server's refusal (RFC 6749 §5.2). code
// is one of the RFC's codes or "other": never the server's free text.
type tokenError struct {
	status int
	code   string
}

func (e *tokenError) Error() string {
	return fmt.Sprintf("token endpoint refused: status %d, error %s", e.status, e.code)
}

// oauthErrorCodes are the error codes of RFC 6749 §5.2 and RFC 7591 §3.2.2
// that a debug log may name; anything else is "other".
var oauthErrorCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true,
	"unauthorized_client": true, "unsupported_grant_type": true, "invalid_scope": true,
	"invalid_target": true, "invalid_redirect_uri": true, "invalid_client_metadata": true,
	"access_denied": true, "server_error": true, "temporarily_unavailable": true,
}

func knownCode(s string) string {
	if oauthErrorCodes[s] {
		return s
	}
	return "other"
}

// errMalformedToken is a 200 answer that is no usable token response.
var errMalformedToken = errors.New("malformed token response")

// parseTokenResponse reads a token endpoint's answer. A 400 or 401 is a
// *tokenError (the grant or the client was refused); another non-200 is
// a *tokenError with code "other"; a 200 must be a JSON object with a
// bearer access_token of visible ASCII. The error never carries a token.
func parseTokenResponse(status int, body []byte) (tokenAnswer, error) {
	var m struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		Error        string          `json:"error"`
	}
	if status != http.StatusOK {
		_ = json.Unmarshal(body, &m)
		return tokenAnswer{}, &tokenError{status: status, code: knownCode(m.Error)}
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return tokenAnswer{}, errMalformedToken
	}
	if m.Error != "" {
		return tokenAnswer{}, &tokenError{status: status, code: knownCode(m.Error)}
	}
	if !visibleASCII(m.AccessToken) || !strings.EqualFold(m.TokenType, "bearer") {
		return tokenAnswer{}, errMalformedToken
	}
	if m.RefreshToken != "" && !visibleASCII(m.RefreshToken) {
		return tokenAnswer{}, errMalformedToken
	}
	a := tokenAnswer{access: m.AccessToken, refresh: m.RefreshToken}
	if len(m.ExpiresIn) > 0 && string(m.ExpiresIn) != "null" {
		// A number, or (some servers) a number in a string.
		s := strings.Trim(string(m.ExpiresIn), `"`)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return tokenAnswer{}, errMalformedToken
		}
		a.expiresIn = time.Duration(min(n, maxTokenLifetimeSeconds)) * time.Second
	}
	return a, nil
}

// maxTokenLifetimeSeconds bounds expires_in (a day): the cache never keeps
// a token longer, whatever the server says.
const maxTokenLifetimeSeconds = 24 * 60 * 60

// visibleASCII: 1 or more of %x21-7E, so a token can go into a header
// after "Bearer " without being read as anything else.
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// clientAuth sets the client authentication of a token request by the
// credential's method: client_secret_basic (RFC 6749 §2.3.1),
// client_secret_post (the id and secret in the body), private_key_jwt
// (RFC 7523 §2.2: a client assertion whose audience is the bound issuer,
// as draft-ietf-oauth-rfc7523bis asks, sent only in this request to its
// pinned token endpoint) or none (the id in the body, a public
// client); an empty method is the default of the secret (basic with one,
// none without).
func clientAuth(r *oauthRequest, clientID, secret, issuer string, method server.ClientAuth, assertions ports.ClientAssertions) *failure {
	if method == "" {
		method, _ = server.ParseClientAuth("", secret != "")
	}
	switch method {
	case server.ClientSecretBasic:
		r.basic = &[2]string{clientID, secret}
	case server.ClientSecretPost:
		r.form.Set("client_id", clientID)
		r.form.Set("client_secret", secret)
	case server.PrivateKeyJWT:
		if assertions == nil {
			return fail(ports.ErrServerUnauthorized, errors.New("private_key_jwt without a signing key (QUAVON_OAUTH_SIGNING_KEYS)"))
		}
		if issuer == "" {
			return fail(ports.ErrServerUnauthorized, errors.New("private_key_jwt without an issuer"))
		}
		jwt, err := assertions.ClientAssertion(clientID, issuer)
		if err != nil {
			return fail(ports.ErrServerUnauthorized, fmt.Errorf("sign a client assertion: %w", err))
		}
		r.form.Set("client_id", clientID)
		r.form.Set("client_assertion_type", clientAssertionType)
		r.form.Set("client_assertion", jwt)
	default: // none
		r.form.Set("client_id", clientID)
	}
	return nil
}

// clientAssertionType is RFC 7523 §2.2's client_assertion_type.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
