package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// hostileTimeout is the request timeout of the hostile tests: short, so
// a slow endpoint costs little.
const hostileTimeout = 400 * time.Millisecond

func writeTokenJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func TestTokenEndpointControls(t *testing.T) {
	const secret = "cc-secret-0815"
	padding := strings.Repeat("x", MaxOAuthResponseBytes)
	cases := []struct {
		name string
		// url builds the token URL from the token server's port.
		url     func(port int) string
		handler http.HandlerFunc
		want    error
		// reached: the token endpoint receives the request.
		reached bool
	}{
		{"loopback literal not allowed by the rules", func(p int) string { return fmt.Sprintf("https://127.0.0.1:%d/token", p) },
			nil, ports.ErrAddressBlocked, false},
		{"name resolving to loopback, not listed", func(p int) string { return fmt.Sprintf("https://as.test:%d/token", p) },
			nil, ports.ErrAddressBlocked, false},
		{"redirect", nil, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://mcp.test/elsewhere", http.StatusTemporaryRedirect)
		}, ports.ErrRedirectRefused, true},
		{"oversized answer", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `{"access_token":"a","token_type":"bearer","pad":"`+padding+`"}`)
		}, ports.ErrResponseTooLarge, true},
		{"slow answer", nil, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * hostileTimeout):
			}
			writeTokenJSON(w, 200, `{"access_token":"late","token_type":"bearer"}`)
		}, ports.ErrTimeout, true},
		{"invalid_client", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 401, `{"error":"invalid_client"}`)
		}, ports.ErrServerUnauthorized, true},
		{"invalid_grant", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 400, `{"error":"invalid_grant","error_description":"`+secret+`"}`)
		}, ports.ErrServerUnauthorized, true},
		{"error code of the server's own words", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 400, `{"error":"`+secret+`"}`)
		}, ports.ErrServerUnauthorized, true},
		{"server error", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 503, `{}`)
		}, ports.ErrServerUnreachable, true},
		{"not JSON", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `access_token=a`)
		}, ports.ErrProtocol, true},
		{"not a bearer token", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `{"access_token":"a","token_type":"mac"}`)
		}, ports.ErrProtocol, true},
		{"token with a line break", nil, func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `{"access_token":"a\r\nX-Evil: 1","token_type":"bearer"}`)
		}, ports.ErrProtocol, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.handler
			if h == nil {
				h = func(w http.ResponseWriter, _ *http.Request) {
					writeTokenJSON(w, 200, `{"access_token":"a","token_type":"bearer"}`)
				}
			}
			tokenSrv := startServer(t, h)
			mcpSrv := startServer(t, newRawServer())
			tokenURL := fmt.Sprintf("https://%s:%d/token", testHost, tokenSrv.port())
			if tc.url != nil {
				tokenURL = tc.url(tokenSrv.port())
			}
			logs := &logBuf{}
			c, dials := newTestConnector(t, selfHosted(t), peerResolver(), hostileTimeout)
			c.opts.Logger = c.opts.Logger.Output(logs)
			cred, err := server.NewOAuthClientCredentials(tokenURL, "client-1", secret, []string{"read"}, "", "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Open(context.Background(), ports.MCPTarget{ServerID: "s", URL: mcpSrv.url(t), Credential: cred}, 1<<20)
			wantCode(t, err, tc.want)
			if n := len(mcpSrv.requests()); n != 0 {
				t.Errorf("the MCP server received %d requests", n)
			}
			got := len(tokenSrv.requests())
			if tc.reached && got != 1 {
				t.Errorf("token endpoint requests = %d, want 1", got)
			}
			if !tc.reached && (got != 0 || len(dials.all()) != 0) {
				t.Errorf("blocked token URL reached: %d requests, dialled %v", got, dials.all())
			}
			noSecrets(t, "the log", logs.String(), secret, "late")
		})
	}
}

// asDocs is a hostile or well-behaved set of metadata documents, all
// served by one test server at https://mcp.test:port (also the issuer).
type asDocs struct {
	challenge string // WWW-Authenticate of the 401; "" for none
	prm       map[string]any
	asm       map[string]any
	prmPath   string // where the PRM is served
	asmPath   string // where the AS metadata is served
	handler   func(w http.ResponseWriter, r *http.Request) bool
}

func (d *asDocs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.handler != nil && d.handler(w, r) {
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/mcp":
		if d.challenge != "" {
			w.Header().Set("WWW-Authenticate", d.challenge)
		}
		w.WriteHeader(http.StatusUnauthorized)
	case r.URL.Path == d.prmPath && d.prm != nil:
		writeDoc(w, d.prm)
	case r.URL.Path == d.asmPath && d.asm != nil:
		writeDoc(w, d.asm)
	default:
		http.NotFound(w, r)
	}
}

func writeDoc(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func TestDiscoveryControls(t *testing.T) {
	// origin serves the MCP server and its authorization server; other
	// is a hostile server on another origin (another port) serving
	// well-formed documents of its own: it must never receive a request.
	type env struct{ origin, other string }
	good := func(e env) *asDocs {
		return &asDocs{
			challenge: `Bearer error="invalid_token", resource_metadata="` + e.origin + `/prm"`,
			prmPath:   "/prm",
			prm:       map[string]any{"resource": e.origin + "/mcp", "authorization_servers": []string{e.origin}, "scopes_supported": []string{"read"}},
			asmPath:   "/.well-known/oauth-authorization-server",
			asm: map[string]any{
				"issuer": e.origin, "authorization_endpoint": e.origin + "/authorize", "token_endpoint": e.origin + "/token",
				"registration_endpoint": e.origin + "/register", "code_challenge_methods_supported": []string{"S256"},
			},
		}
	}
	cases := []struct {
		name   string
		change func(e env, d *asDocs)
		want   error // nil: discovery succeeds
		// bound is the issuer the credential is bound to ("" none).
		bound bool
	}{
		{"well-behaved", func(env, *asDocs) {}, nil, false},
		{"well-behaved, bound to its issuer", func(env, *asDocs) {}, nil, true},
		{"bound issuer among several named", func(e env, d *asDocs) {
			d.prm["authorization_servers"] = []string{e.other, e.origin}
		}, nil, true},
		{"server names another authorization server than the bound issuer", func(e env, d *asDocs) {
			d.prm["authorization_servers"] = []string{e.other}
		}, ports.ErrOAuthIssuer, true},
		{"token endpoint on another origin", func(e env, d *asDocs) {
			d.asm["token_endpoint"] = e.other + "/token"
		}, ports.ErrOAuthIssuer, false},
		{"token endpoint on another origin, bound issuer", func(e env, d *asDocs) {
			d.asm["token_endpoint"] = e.other + "/token"
		}, ports.ErrOAuthIssuer, true},
		{"registration endpoint on another origin", func(e env, d *asDocs) {
			d.asm["registration_endpoint"] = e.other + "/register"
		}, ports.ErrOAuthIssuer, false},
		{"resource_metadata on another origin: the well-known URL instead", func(e env, d *asDocs) {
			d.challenge = `Bearer resource_metadata="` + e.other + `/prm"`
			d.prmPath = "/.well-known/oauth-protected-resource/mcp"
		}, nil, false},
		{"resource_metadata on another origin, nothing at the well-known URL", func(e env, d *asDocs) {
			d.challenge = `Bearer resource_metadata="` + e.other + `/prm"`
		}, ports.ErrOAuthMetadata, false},
		{"no challenge: RFC 9728 well-known URL", func(_ env, d *asDocs) {
			d.challenge, d.prmPath = "", "/.well-known/oauth-protected-resource/mcp"
		}, nil, false},
		{"no RFC 8414 document: OpenID configuration", func(_ env, d *asDocs) {
			d.asmPath = "/.well-known/openid-configuration"
		}, nil, false},
		{"protected resource names another resource", func(_ env, d *asDocs) {
			d.prm["resource"] = "https://other.test/mcp"
		}, ports.ErrOAuthMetadata, false},
		{"issuer differs (mix-up)", func(_ env, d *asDocs) {
			d.asm["issuer"] = "https://evil.test"
		}, ports.ErrOAuthMetadata, false},
		{"token endpoint over http", func(e env, d *asDocs) {
			d.asm["token_endpoint"] = strings.Replace(e.origin, "https:", "http:", 1) + "/token"
		}, ports.ErrOAuthMetadata, false},
		{"registration endpoint over http", func(e env, d *asDocs) {
			d.asm["registration_endpoint"] = strings.Replace(e.origin, "https:", "http:", 1) + "/register"
		}, ports.ErrOAuthMetadata, false},
		{"token endpoint on a private address", func(_ env, d *asDocs) {
			d.asm["token_endpoint"] = "https://10.0.0.1/token"
		}, ports.ErrAddressBlocked, false},
		{"authorization endpoint on loopback, not listed", func(_ env, d *asDocs) {
			d.asm["authorization_endpoint"] = "https://127.0.0.1/authorize"
		}, ports.ErrAddressBlocked, false},
		{"no token endpoint", func(_ env, d *asDocs) { delete(d.asm, "token_endpoint") }, ports.ErrOAuthMetadata, false},
		// PKCE is judged by the domain (server.AuthorizationServer.CheckFor):
		// discovery passes the list through as it came.
		{"no PKCE S256: passed through", func(_ env, d *asDocs) {
			d.asm["code_challenge_methods_supported"] = []string{"plain"}
		}, nil, false},
		{"no PKCE methods: passed through", func(_ env, d *asDocs) {
			delete(d.asm, "code_challenge_methods_supported")
		}, nil, false},
		{"no authorization server", func(_ env, d *asDocs) {
			d.prm["authorization_servers"] = []string{}
		}, ports.ErrOAuthMetadata, false},
		{"authorization server over http", func(e env, d *asDocs) {
			d.prm["authorization_servers"] = []string{strings.Replace(e.origin, "https:", "http:", 1)}
		}, ports.ErrOAuthMetadata, false},
		{"resource metadata over http", func(e env, d *asDocs) {
			d.challenge = `Bearer resource_metadata="` + strings.Replace(e.origin, "https:", "http:", 1) + `/prm"`
		}, ports.ErrOAuthMetadata, false},
		{"resource metadata on a private address (another origin: not followed)", func(_ env, d *asDocs) {
			d.challenge = `Bearer resource_metadata="https://10.0.0.1/prm"`
		}, ports.ErrOAuthMetadata, false},
		{"metadata redirect", func(e env, d *asDocs) {
			d.handler = func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/prm" {
					http.Redirect(w, r, e.origin+"/prm2", http.StatusFound)
					return true
				}
				return false
			}
		}, ports.ErrRedirectRefused, false},
		{"oversized metadata", func(_ env, d *asDocs) {
			d.asm["pad"] = strings.Repeat("x", MaxOAuthResponseBytes)
		}, ports.ErrResponseTooLarge, false},
		{"slow metadata", func(_ env, d *asDocs) {
			d.handler = func(_ http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/.well-known/oauth-authorization-server" {
					select {
					case <-r.Context().Done():
					case <-time.After(3 * hostileTimeout):
					}
					return true
				}
				return false
			}
		}, ports.ErrTimeout, false},
		{"no metadata at all", func(_ env, d *asDocs) { d.prm = nil }, ports.ErrOAuthMetadata, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, hostile := &asDocs{}, &asDocs{}
			ts, otherSrv := startServer(t, docs), startServer(t, hostile)
			e := env{origin: fmt.Sprintf("https://%s:%d", testHost, ts.port()), other: fmt.Sprintf("https://%s:%d", testHost, otherSrv.port())}
			*docs = *good(e)
			*hostile = *good(env{origin: e.other})
			hostile.prm["resource"] = e.origin + "/mcp"
			tc.change(e, docs)
			c, dials := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
			oc := NewOAuthClient(c.opts)
			oc.connect = c.connect
			bound := ""
			if tc.bound {
				bound = e.origin
			}
			md, err := oc.Discover(context.Background(), mustURL(t, e.origin+"/mcp"), bound)
			if n := len(otherSrv.requests()); n != 0 {
				t.Errorf("the server on another origin received %d requests", n)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Discover: %v", err)
				}
				if md.Issuer != e.origin || md.TokenEndpoint.String() != e.origin+"/token" || md.Resource != e.origin+"/mcp" ||
					md.AuthorizationEndpoint.String() != e.origin+"/authorize" || md.RegistrationEndpoint.String() != e.origin+"/register" {
					t.Errorf("metadata = %+v", md)
				}
				want, _ := docs.asm["code_challenge_methods_supported"].([]string)
				if !slices.Equal(md.CodeChallengeMethods, want) {
					t.Errorf("CodeChallengeMethods = %q, want %q as announced", md.CodeChallengeMethods, want)
				}
				return
			}
			wantCode(t, err, tc.want)
			for _, a := range dials.all() {
				if !strings.HasPrefix(a, "127.0.0.1:") {
					t.Errorf("dialled %s", a)
				}
			}
		})
	}
	t.Run("server on a blocked address: nothing sent", func(t *testing.T) {
		ts := startServer(t, &asDocs{})
		c, dials := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
		oc := NewOAuthClient(c.opts)
		oc.connect = c.connect
		_, err := oc.Discover(context.Background(), mustURL(t, fmt.Sprintf("https://127.0.0.1:%d/mcp", ts.port())), "")
		wantCode(t, err, ports.ErrAddressBlocked)
		if len(ts.requests()) != 0 || len(dials.all()) != 0 {
			t.Errorf("sent %d requests, dialled %v", len(ts.requests()), dials.all())
		}
	})
}

func TestExchangeCodeControls(t *testing.T) {
	padding := strings.Repeat("x", MaxOAuthResponseBytes)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"expired or replayed code", func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 400, `{"error":"invalid_grant"}`)
		}, ports.ErrOAuthRejected},
		{"wrong client secret", func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 401, `{"error":"invalid_client"}`)
		}, ports.ErrOAuthRejected},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://mcp.test/x", http.StatusFound)
		}, ports.ErrRedirectRefused},
		{"oversized answer", func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `{"access_token":"a","token_type":"bearer","pad":"`+padding+`"}`)
		}, ports.ErrResponseTooLarge},
		{"malformed answer", func(w http.ResponseWriter, _ *http.Request) {
			writeTokenJSON(w, 200, `{"token_type":"bearer"}`)
		}, ports.ErrProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.handler)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
			oc := NewOAuthClient(c.opts)
			oc.connect = c.connect
			_, err := oc.ExchangeCode(context.Background(), ports.OAuthCodeExchange{
				TokenURL: mustURL(t, fmt.Sprintf("https://%s:%d/token", testHost, ts.port())), ClientID: "c", ClientSecret: "s3cret-xyz",
				Code: "code-1", Verifier: "v", RedirectURI: "https://app.test/cb", Resource: mustURL(t, "https://mcp.test/mcp"),
			})
			wantCode(t, err, tc.want)
		})
	}
	t.Run("token URL on a blocked address: nothing sent", func(t *testing.T) {
		ts := startServer(t, http.NotFoundHandler())
		c, dials := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
		oc := NewOAuthClient(c.opts)
		oc.connect = c.connect
		_, err := oc.ExchangeCode(context.Background(), ports.OAuthCodeExchange{
			TokenURL: mustURL(t, fmt.Sprintf("https://127.0.0.1:%d/token", ts.port())), ClientID: "c",
			Code: "code-1", Verifier: "v", RedirectURI: "https://app.test/cb", Resource: mustURL(t, "https://mcp.test/mcp"),
		})
		wantCode(t, err, ports.ErrAddressBlocked)
		if len(ts.requests()) != 0 || len(dials.all()) != 0 {
			t.Errorf("sent %d requests, dialled %v", len(ts.requests()), dials.all())
		}
	})
}

func FuzzParseTokenResponse(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r"}`))
	f.Add(200, []byte(`{"access_token":"a","token_type":"bearer","expires_in":"60"}`))
	f.Add(400, []byte(`{"error":"invalid_grant"}`))
	f.Add(200, []byte(`{"access_token":"a b","token_type":"bearer"}`))
	f.Add(200, []byte(`[]`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		a, err := parseTokenResponse(status, body)
		if err != nil {
			if a != (tokenAnswer{}) {
				t.Fatal("an error with a token")
			}
			var te *tokenError
			if asTokenError(err, &te) && te.code != "other" && !oauthErrorCodes[te.code] {
				t.Fatalf("unknown error code %q passed through", te.code)
			}
			return
		}
		if status != 200 || !visibleASCII(a.access) || (a.refresh != "" && !visibleASCII(a.refresh)) {
			t.Fatalf("accepted %d %q", status, body)
		}
		if a.expiresIn < 0 || a.expiresIn > maxTokenLifetimeSeconds*time.Second {
			t.Fatalf("expiry %v out of bounds", a.expiresIn)
		}
	})
}

func asTokenError(err error, te **tokenError) bool {
	e, ok := err.(*tokenError)
	*te = e
	return ok
}

func FuzzResourceMetadataURL(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource", scope="a b"`)
	f.Add(`Basic realm="x", Bearer error="invalid_token", resource_metadata="https://a.test/prm"`)
	f.Add(`Bearer resource_metadata=`)
	f.Fuzz(func(t *testing.T, h string) {
		u := resourceMetadataURL([]string{h})
		if u != "" && !strings.Contains(h, u) && !strings.Contains(h, strings.ReplaceAll(u, `"`, `\"`)) {
			// The parser unescapes quoted strings; anything else must
			// come from the header.
			if !strings.Contains(strings.ReplaceAll(h, `\`, ""), u) {
				t.Fatalf("resource_metadata %q not in the header %q", u, h)
			}
		}
	})
}

func TestAccessTokenNeverFollowsARedirect(t *testing.T) {
	const access = "access-token-4242"
	tokenSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeTokenJSON(w, 200, `{"access_token":"`+access+`","token_type":"Bearer","expires_in":600}`)
	}))
	other := startServer(t, newRawServer())
	mcpSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.url(t).String(), http.StatusTemporaryRedirect)
	}))
	logs := &logBuf{}
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
	c.opts.Logger = c.opts.Logger.Output(logs)
	cred, err := server.NewOAuthClientCredentials(fmt.Sprintf("https://%s:%d/token", testHost, tokenSrv.port()), "client-1", "cc-secret-77", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Open(context.Background(), ports.MCPTarget{ServerID: "s", URL: mcpSrv.url(t), Credential: cred}, 1<<20)
	wantCode(t, err, ports.ErrRedirectRefused)
	if n := len(other.requests()); n != 0 {
		t.Errorf("the redirect target received %d requests", n)
	}
	for _, r := range mcpSrv.requests() {
		if r.Header.Get("Authorization") != "Bearer "+access {
			t.Errorf("MCP request without the access token")
		}
	}
	for _, r := range tokenSrv.requests() {
		if strings.Contains(r.Header.Get("Authorization"), access) || strings.Contains(string(r.Body), access) {
			t.Errorf("the token endpoint received the access token")
		}
	}
	noSecrets(t, "the log", logs.String(), access, "cc-secret-77")
}

func TestWellKnownURLs(t *testing.T) {
	cases := []struct {
		in       string
		resource []string
		as       []string
	}{
		{"https://as.test", []string{"https://as.test/.well-known/oauth-protected-resource"},
			[]string{"https://as.test/.well-known/oauth-authorization-server", "https://as.test/.well-known/openid-configuration"}},
		{"https://as.test:8443/tenant1/", []string{"https://as.test:8443/.well-known/oauth-protected-resource/tenant1", "https://as.test:8443/.well-known/oauth-protected-resource"},
			[]string{"https://as.test:8443/.well-known/oauth-authorization-server/tenant1", "https://as.test:8443/.well-known/openid-configuration/tenant1", "https://as.test:8443/tenant1/.well-known/openid-configuration"}},
	}
	for _, tc := range cases {
		u := mustURL(t, tc.in)
		if got := wellKnownResourceURLs(u); strings.Join(got, " ") != strings.Join(tc.resource, " ") {
			t.Errorf("wellKnownResourceURLs(%s) = %v, want %v", tc.in, got, tc.resource)
		}
		if got := authServerMetadataURLs(u); strings.Join(got, " ") != strings.Join(tc.as, " ") {
			t.Errorf("authServerMetadataURLs(%s) = %v, want %v", tc.in, got, tc.as)
		}
	}
}

// TestClientCredentialsSecretGoesOnlyToTheAdminsTokenURL: a hostile MCP
// server answers every request with a 401 whose challenge names its own
// resource metadata and authorization server (both on a hostile origin,
// serving well-formed documents). The connector never follows them: the
// secret goes only to the token URL the admin entered, twice at most
// (the token and the one refresh after a 401), and nothing at all reaches
// the hostile origin.
func TestClientCredentialsSecretGoesOnlyToTheAdminsTokenURL(t *testing.T) {
	const secret = "cc-secret-admin-only"
	tokenSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeTokenJSON(w, 200, `{"access_token":"at-1","token_type":"Bearer","expires_in":600}`)
	}))
	hostile := &asDocs{}
	hostileSrv := startServer(t, hostile)
	evil := fmt.Sprintf("https://%s:%d", testHost, hostileSrv.port())
	mcpSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			writeDoc(w, map[string]any{"resource": "https://" + r.Host + "/mcp", "authorization_servers": []string{evil}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+evil+`/prm"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	*hostile = asDocs{
		prmPath: "/prm",
		prm:     map[string]any{"resource": mcpSrv.url(t).String(), "authorization_servers": []string{evil}},
		asmPath: "/.well-known/oauth-authorization-server",
		asm: map[string]any{"issuer": evil, "authorization_endpoint": evil + "/authorize", "token_endpoint": evil + "/token",
			"code_challenge_methods_supported": []string{"S256"}},
	}
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
	tokenURL := fmt.Sprintf("https://%s:%d/token", testHost, tokenSrv.port())
	cred, err := server.NewOAuthClientCredentials(tokenURL, "client-1", secret, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Open(context.Background(), ports.MCPTarget{ServerID: "s", URL: mcpSrv.url(t), Credential: cred}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(hostileSrv.requests()); n != 0 {
		t.Fatalf("the hostile origin received %d requests", n)
	}
	toks := tokenSrv.requests()
	if len(toks) != 2 {
		t.Fatalf("token requests = %d, want 2 (the token and one refresh after the 401)", len(toks))
	}
	for _, r := range toks {
		if _, pass, ok := basicAuth(r.Header.Get("Authorization")); !ok || pass != secret {
			t.Errorf("token request without the admin's client_secret_basic")
		}
	}
	for _, r := range mcpSrv.requests() {
		if strings.Contains(fmt.Sprint(r.Header), secret) || strings.Contains(string(r.Body), secret) {
			t.Errorf("the MCP server received the client secret")
		}
	}
}
