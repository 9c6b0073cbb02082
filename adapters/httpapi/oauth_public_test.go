package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
)

// publishedJWKS is a JWK set as the signing ring publishes it (an Ed25519
// key, then a P-256 key).
const publishedJWKS = `{"keys":[` +
	`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ed1","alg":"EdDSA","use":"sig"},` +
	`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"ec1","alg":"ES256","use":"sig"}]}`

// countingAuth counts authentications; the public routes must make none.
type countingAuth struct{ calls atomic.Int32 }

func (a *countingAuth) Handle(context.Context, accounts.Authenticate) (ports.Principal, error) {
	a.calls.Add(1)
	return ports.Principal{}, ports.ErrNotFound
}

type publicReady struct{}

func (publicReady) Ping(context.Context) error { return nil }

// publicAPI is a server with the public OAuth routes only, behind closed
// gates (MCP context disabled): gates must not apply to them.
func publicAPI(t *testing.T, p httpapi.OAuthPublic) (*httptest.Server, *countingAuth) {
	t.Helper()
	routes, err := httpapi.NewOAuthPublicRoutes(p)
	if err != nil {
		t.Fatalf("NewOAuthPublicRoutes() = %v", err)
	}
	disabled, err := gate.ParseInstance("disabled")
	if err != nil {
		t.Fatal(err)
	}
	edition, err := gate.ParseEdition("self-hosted")
	if err != nil {
		t.Fatal(err)
	}
	auth := &countingAuth{}
	srv := httpapi.NewServer("127.0.0.1:0", zerolog.Nop(), publicReady{}, auth, app.NewGates(disabled, edition),
		netpolicy.TrustedProxies{}, []httpapi.Routes{routes}, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, auth
}

type publicAnswer struct {
	status int
	header http.Header
	body   []byte
}

func getPublic(t *testing.T, ts *httptest.Server, path string, header http.Header) publicAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	validatePublic(t, req, resp.StatusCode, resp.Header, body)
	return publicAnswer{resp.StatusCode, resp.Header, body}
}

// publicSpec is openapi.yaml's router, loaded and validated once.
var publicSpec = sync.OnceValues(func() (routers.Router, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../../openapi.yaml")
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, err
	}
	doc.Servers = nil // any host: the test server listens on a random port
	return legacy.NewRouter(doc)
})

// validatePublic checks an answer against openapi.yaml, as the binary's
// tests check every answer (cmd/codelotse, validateAgainstSpec).
func validatePublic(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	router, err := publicSpec()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in openapi.yaml: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s → %d does not match openapi.yaml: %v\nbody: %s", req.Method, req.URL.Path, status, err, body)
	}
}

// TestOAuthPublicRoutesAnswerEveryCallerTheSame: with an https public
// URL both documents are served to anyone, with or without a token (a
// valid-looking or a garbage one), behind closed gates, the same bytes
// and headers; no authentication is attempted.
func TestOAuthPublicRoutesAnswerEveryCallerTheSame(t *testing.T) {
	ts, auth := publicAPI(t, httpapi.OAuthPublic{PublicURL: "https://review.example.com", JWKS: []byte(publishedJWKS)})
	callers := []http.Header{
		{},
		{"Authorization": {"Bearer tok-tenant-a-0123456789"}},
		{"Authorization": {"Basic dXNlcjpwYXNz"}, "X-Forwarded-For": {"203.0.113.7"}, "Cookie": {"session=abc"}},
	}
	for _, path := range []string{"/oauth/client-metadata.json", "/oauth/jwks.json"} {
		var first publicAnswer
		for i, h := range callers {
			a := getPublic(t, ts, path, h)
			if a.status != http.StatusOK {
				t.Fatalf("GET %s (caller %d) = %d %s, want 200", path, i+1, a.status, a.body)
			}
			if ct, cc := a.header.Get("Content-Type"), a.header.Get("Cache-Control"); ct != "application/json" || cc != "public, max-age=3600" {
				t.Errorf("GET %s (caller %d): Content-Type %q, Cache-Control %q", path, i+1, ct, cc)
			}
			if a.header.Get("Set-Cookie") != "" || a.header.Get("WWW-Authenticate") != "" {
				t.Errorf("GET %s (caller %d) sets %v", path, i+1, a.header)
			}
			if i == 0 {
				first = a
				continue
			}
			if !bytes.Equal(a.body, first.body) {
				t.Errorf("GET %s: caller %d got\n%s\nthe first got\n%s", path, i+1, a.body, first.body)
			}
		}
	}
	if n := auth.calls.Load(); n != 0 {
		t.Errorf("the public routes authenticated %d times, want never", n)
	}
	if a := getPublic(t, ts, "/oauth/jwks.json", nil); string(a.body) != publishedJWKS {
		t.Errorf("GET /oauth/jwks.json = %s, want the ring's JWKS unchanged", a.body)
	}
	var doc map[string]any
	if err := json.Unmarshal(getPublic(t, ts, "/oauth/client-metadata.json", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["client_id"] != "https://review.example.com/oauth/client-metadata.json" ||
		doc["token_endpoint_auth_method"] != "private_key_jwt" || doc["jwks_uri"] != "https://review.example.com/oauth/jwks.json" {
		t.Errorf("client metadata %v, want the instance's client id, private_key_jwt and its jwks_uri", doc)
	}
}

// TestOAuthPublicRoutesNeedAnHTTPSPublicURL: on an http public URL
// neither path is routed: both answer what an unknown path answers.
func TestOAuthPublicRoutesNeedAnHTTPSPublicURL(t *testing.T) {
	for _, publicURL := range []string{"http://review.example.com", "http://127.0.0.1:8080", ""} {
		ts, _ := publicAPI(t, httpapi.OAuthPublic{PublicURL: publicURL, JWKS: []byte(publishedJWKS)})
		unknown := getPublicUnchecked(t, ts, "/oauth/unknown.json")
		for _, path := range []string{"/oauth/client-metadata.json", "/oauth/jwks.json"} {
			a := getPublic(t, ts, path, nil)
			if a.status != http.StatusNotFound || !bytes.Equal(a.body, unknown.body) {
				t.Errorf("public URL %q: GET %s = %d %s, want the 404 of an unknown path (%s)", publicURL, path, a.status, a.body, unknown.body)
			}
			if cc := a.header.Get("Cache-Control"); cc != unknown.header.Get("Cache-Control") {
				t.Errorf("public URL %q: GET %s has Cache-Control %q, an unknown path %q", publicURL, path, cc, unknown.header.Get("Cache-Control"))
			}
		}
	}
}

// TestJWKSNotFoundWithoutSigningKeys: without signing keys the JWKS path
// is unknown, and the client metadata names no jwks_uri (a public
// client).
func TestJWKSNotFoundWithoutSigningKeys(t *testing.T) {
	for _, jwks := range [][]byte{nil, {}} {
		ts, _ := publicAPI(t, httpapi.OAuthPublic{PublicURL: "https://review.example.com", JWKS: jwks})
		if a := getPublic(t, ts, "/oauth/jwks.json", nil); a.status != http.StatusNotFound {
			t.Errorf("GET /oauth/jwks.json without keys = %d %s, want 404", a.status, a.body)
		}
		a := getPublic(t, ts, "/oauth/client-metadata.json", nil)
		var doc map[string]any
		if err := json.Unmarshal(a.body, &doc); err != nil || a.status != http.StatusOK {
			t.Fatalf("GET /oauth/client-metadata.json = %d %s", a.status, a.body)
		}
		if _, ok := doc["jwks_uri"]; ok || doc["token_endpoint_auth_method"] != "none" {
			t.Errorf("client metadata without keys %s, want none and no jwks_uri", a.body)
		}
	}
}

// TestOAuthPublicRoutesAreGetOnly: another method is answered as an
// unknown path is, never with a document.
func TestOAuthPublicRoutesAreGetOnly(t *testing.T) {
	ts, _ := publicAPI(t, httpapi.OAuthPublic{PublicURL: "https://review.example.com", JWKS: []byte(publishedJWKS)})
	for _, path := range []string{"/oauth/client-metadata.json", "/oauth/jwks.json"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader([]byte(`{}`)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || bytes.Contains(body, []byte("client_id")) || bytes.Contains(body, []byte("keys")) {
				t.Errorf("%s %s = %d %s, want 404", method, path, resp.StatusCode, body)
			}
		}
	}
}

// TestNewOAuthPublicRoutesKeepsItsOwnJWKS: a caller changing the bytes
// it gave changes nothing that is served.
func TestNewOAuthPublicRoutesKeepsItsOwnJWKS(t *testing.T) {
	given := []byte(publishedJWKS)
	ts, _ := publicAPI(t, httpapi.OAuthPublic{PublicURL: "https://review.example.com", JWKS: given})
	given[0] = 'x'
	if a := getPublic(t, ts, "/oauth/jwks.json", nil); string(a.body) != publishedJWKS {
		t.Errorf("GET /oauth/jwks.json = %s after the caller changed its bytes", a.body)
	}
}

func getPublicUnchecked(t *testing.T, ts *httptest.Server, path string) publicAnswer {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return publicAnswer{resp.StatusCode, resp.Header, body}
}
