// Package oauthpeer starts, for tests only, a real OAuth authorization
// server and an MCP server that it protects, both on loopback TLS:
//
//   - the authorization server is zitadel/oidc's OpenID provider
//     (github.com/zitadel/oidc/v3/pkg/op) over its example in-memory
//     storage and login form: client credentials, the authorization code
//     with PKCE, refresh tokens with rotation; besides it, an RFC 8414
//     metadata document (the provider's own, with a registration
//     endpoint added) and an RFC 7591 registration endpoint that adds
//     web clients to the storage;
//   - the MCP server is the go-sdk's streamable HTTP handler behind
//     auth.RequireBearerToken, with its protected-resource metadata
//     (auth.ProtectedResourceMetadataHandler) and one tool, "echo".
//
// Beyond the example storage's clients, the authorization server may
// know clients that authenticate with private_key_jwt (RFC 7523 §2.2,
// [Options.KeyClients], for client credentials) and clients whose id is
// the https URL of their client ID metadata document
// ([Options.ClientIDMetadataDocuments], fetched through
// [Options.DocumentClient], with private_key_jwt against its jwks_uri or
// none); every client assertion is verified by the peer itself
// (assertion.go: signature, iss, sub, aud, exp, iat, a jti never seen
// before) and recorded ([Peer.Assertions]), every document fetched is
// recorded ([Peer.Documents]). The MCP server can move to another peer's
// authorization server ([Peer.MoveTo]), as a resource migrating between
// authorization servers does.
//
// Every request either server receives is recorded (method, path, query,
// headers, body and form), so tests can assert what was sent where. Both
// servers answer at names (default as.test and mcp.test) that the test's
// resolver maps to 127.0.0.1, with a certificate from a CA of their own
// ([Peer.Pool]). The login can be completed over HTTP ([Peer.Login]) or
// by a browser (user [Peer.Username], password [Password]).
package oauthpeer

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
)

// The clients the storage knows from the start.
const (
	// ServiceClientID and ServiceClientSecret are the client-credentials
	// client of zitadel's example storage.
	ServiceClientID     = "sid1"
	ServiceClientSecret = "verysecret"
	// WebClientID is a confidential code-flow client (client_secret_basic)
	// with Options.WebClientSecret and Options.RedirectURIs.
	WebClientID = "codelotse-web"
	// PublicClientID is a public code-flow client (PKCE, no secret) with
	// Options.RedirectURIs.
	PublicClientID = "codelotse-public"
	// Password is the password of the example user; Username names it.
	Password = "verysecure"
)

// Options configure [Start]. Zero values take the defaults.
type Options struct {
	// ASHost and MCPHost are the names the servers answer at (as.test,
	// mcp.test); the caller's resolver maps them to 127.0.0.1.
	ASHost, MCPHost string
	// WebClientSecret is WebClientID's secret ("web-secret").
	WebClientSecret string
	// RedirectURIs of WebClientID and PublicClientID
	// (https://app.test/callback).
	RedirectURIs []string
	// MCPPath is the MCP endpoint's path ("/mcp").
	MCPPath string
	// Scopes the MCP server requires of a token (none).
	Scopes []string
	// Logger, when set, receives the provider's request log; zitadel's
	// example then makes it slog's default logger (process-wide). Nil
	// leaves slog's default alone.
	Logger *slog.Logger
	// KeyClients are client-credentials clients that authenticate with
	// private_key_jwt: client id → its public keys (each with its kid).
	// They have no secret.
	KeyClients map[string]jose.JSONWebKeySet
	// ClientIDMetadataDocuments makes the metadata announce
	// client_id_metadata_document_supported and the provider take an
	// https URL as a client id: the URL of the client's metadata
	// document, which the peer fetches and checks (cimd.go).
	ClientIDMetadataDocuments bool
	// DocumentClient fetches the metadata documents and their jwks_uri
	// (redirects are never followed, whatever it says). Nil: a client
	// with the system's roots and a 10 s timeout.
	DocumentClient *http.Client
	// TokenEndpointAuthMethods, when set, replaces the metadata's
	// token_endpoint_auth_methods_supported (the provider's list: none,
	// client_secret_basic, client_secret_post, private_key_jwt); what
	// the token endpoint accepts stays the provider's.
	TokenEndpointAuthMethods []string
}

// Request is one recorded request.
type Request struct {
	Method string
	Host   string
	Path   string
	// RawQuery is the URL's query (an authorization request's
	// parameters).
	RawQuery string
	Header   http.Header
	// Body is the request's body (at most 1 MiB of it).
	Body []byte
	// Form is the parsed body of a form POST (nil otherwise).
	Form url.Values
}

// Peer is a running authorization server and MCP server.
type Peer struct {
	// Issuer is the authorization server's issuer (https://as.test:port).
	Issuer string
	// MCPURL is the MCP endpoint (https://mcp.test:port/mcp).
	MCPURL string
	// Pool trusts the servers' certificates.
	Pool *x509.CertPool
	// Username is the example user's login name.
	Username string

	as, rs    *httptest.Server
	store     *peerStorage
	crypto    op.Crypto
	documents *documents // nil unless Options.ClientIDMetadataDocuments

	mu         sync.Mutex
	asReqs     []Request
	rsReqs     []Request
	assertions []Assertion
	jtis       map[string]bool // iss NUL jti of every verified assertion
	fetches    []DocumentFetch
	authority  *Peer // whose authorization server the MCP server names (MoveTo)
	tokenHit   map[string]int
	refuse     bool
}

// Start starts both servers; they stop when the test ends.
func Start(t testing.TB, o Options) *Peer {
	t.Helper()
	if o.ASHost == "" {
		o.ASHost = "as.test"
	}
	if o.MCPHost == "" {
		o.MCPHost = "mcp.test"
	}
	if o.WebClientSecret == "" {
		o.WebClientSecret = "web-secret"
	}
	if len(o.RedirectURIs) == 0 {
		o.RedirectURIs = []string{"https://app.test/callback"}
	}
	if o.MCPPath == "" {
		o.MCPPath = "/mcp"
	}
	pki, err := localpki.New(o.ASHost, o.MCPHost)
	if err != nil {
		t.Fatal(err)
	}
	p := &Peer{Pool: pki.Pool, tokenHit: map[string]int{}, jtis: map[string]bool{}}
	p.authority = p
	if o.ClientIDMetadataDocuments {
		p.documents = newDocuments(p, o.DocumentClient)
	}

	p.as = httptest.NewUnstartedServer(nil)
	p.as.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	p.Issuer = "https://" + net.JoinHostPort(o.ASHost, port(p.as.Listener))
	p.rs = httptest.NewUnstartedServer(nil)
	p.rs.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	rsOrigin := "https://" + net.JoinHostPort(o.MCPHost, port(p.rs.Listener))
	p.MCPURL = rsOrigin + o.MCPPath

	users := storage.NewUserStore(p.Issuer)
	p.Username = "test-user@" + o.ASHost
	web := storage.WebClient(WebClientID, o.WebClientSecret, o.RedirectURIs...)
	public := storage.NativeClient(PublicClientID, o.RedirectURIs...)
	p.store = &peerStorage{
		Storage:    storage.NewStorageWithClients(users, map[string]*storage.Client{WebClientID: web, PublicClientID: public}),
		issued:     map[string]*issued{},
		dynamic:    map[string]*storage.Client{},
		keyClients: o.KeyClients,
		peer:       p,
	}
	// exampleop.SetupServer encrypts opaque tokens with this key.
	p.crypto = op.NewAES256GCMCrypto(sha256.Sum256([]byte("test")), "key1")
	opHandler := exampleop.SetupServer(p.Issuer, p.store, o.Logger, false)

	asMux := http.NewServeMux()
	asMux.HandleFunc("GET /.well-known/oauth-authorization-server", p.authServerMetadata(opHandler, o))
	asMux.HandleFunc("POST /register", p.register(o.RedirectURIs))
	asMux.Handle("POST /oauth/token", p.tokenEndpoint(opHandler))
	asMux.Handle("/", opHandler)
	p.as.Config.Handler = p.recording(&p.asReqs, asMux)
	p.as.Config.ErrorLog = nil
	p.as.StartTLS()
	t.Cleanup(p.as.Close)

	srv := mcp.NewServer(&mcp.Implementation{Name: "oauthpeer", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true,
		// The servers answer at names mapped to loopback.
		DisableLocalhostProtection: true,
	})
	prmPath := "/.well-known/oauth-protected-resource" + o.MCPPath
	rsMux := http.NewServeMux()
	rsMux.Handle(o.MCPPath, auth.RequireBearerToken(p.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: rsOrigin + prmPath,
		Scopes:              o.Scopes,
	})(mcpHandler))
	rsMux.HandleFunc(prmPath, func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:             p.MCPURL,
			AuthorizationServers: []string{p.currentAuthority().Issuer},
			ScopesSupported:      o.Scopes,
		}).ServeHTTP(w, r)
	})
	p.rs.Config.Handler = p.recording(&p.rsReqs, rsMux)
	p.rs.Config.ErrorLog = nil
	p.rs.StartTLS()
	t.Cleanup(p.rs.Close)
	return p
}

func port(l net.Listener) string {
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// ASRequests are the requests the authorization server received.
func (p *Peer) ASRequests() []Request { return p.requests(&p.asReqs) }

// MCPRequests are the requests the MCP server (and its metadata URL)
// received.
func (p *Peer) MCPRequests() []Request { return p.requests(&p.rsReqs) }

// TokenRequests are the authorization server's token requests.
func (p *Peer) TokenRequests() []Request {
	var out []Request
	for _, r := range p.ASRequests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/token") {
			out = append(out, r)
		}
	}
	return out
}

func (p *Peer) requests(list *[]Request) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), (*list)...)
}

func (p *Peer) recording(list *[]Request, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()}
		if r.Body != nil && r.Body != http.NoBody {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			rec.Body = body
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
				rec.Form, _ = url.ParseQuery(string(body))
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		p.mu.Lock()
		*list = append(*list, rec)
		p.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// RevokeAccessTokens makes the MCP server refuse every access token
// issued so far (as if the authorization server had revoked them).
func (p *Peer) RevokeAccessTokens() {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	for _, it := range p.store.issued {
		it.revoked = true
	}
}

// RefuseTokens makes the MCP server refuse every access token, also
// those issued later, while on is true.
func (p *Peer) RefuseTokens(on bool) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.refuse = on
}

// MoveTo moves the MCP server to the authorization server of as, as a
// resource migrating between authorization servers does: from now on its
// protected-resource metadata names as's issuer alone, and it accepts
// only the access tokens as's provider issued (so the tokens of the
// former one are refused, 401). MoveTo(p) moves it back.
func (p *Peer) MoveTo(as *Peer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.authority = as
}

func (p *Peer) currentAuthority() *Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authority
}

// RegisteredClients are the client ids the registration endpoint issued,
// in order.
func (p *Peer) RegisteredClients() []string {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	var out []string
	for _, s := range p.store.secrets {
		out = append(out, s[0])
	}
	return out
}

// verify is the MCP server's token check: the token must be one the
// provider of the current authority ([Peer.MoveTo]; the peer's own by
// default) minted (it decrypts with the provider's key) for a token its
// storage issued, not revoked (refresh-token rotation revokes the access
// token of the spent refresh token, like the example storage), not
// expired.
func (p *Peer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	a := p.currentAuthority()
	plain, err := a.crypto.Decrypt(token)
	if err != nil {
		return nil, auth.ErrInvalidToken
	}
	id, subject, ok := strings.Cut(plain, ":")
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	a.store.mu.Lock()
	it, ok := a.store.issued[id]
	a.store.mu.Unlock()
	p.store.mu.Lock()
	refuse := p.refuse
	p.store.mu.Unlock()
	if refuse || !ok || it.revoked || !time.Now().Before(it.expires) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: it.scopes, Expiration: it.expires, UserID: subject}, nil
}

// Login completes the login of an authorization request over HTTP, as a
// browser would: it opens authURL (an authorization endpoint URL with
// the client's parameters), posts the example user's name and password
// to the login form, and follows the authorization server's redirects
// until one leaves it. It returns that redirect: the client's
// redirect_uri with code, state and iss.
func (p *Peer) Login(ctx context.Context, authURL string) (*url.URL, error) {
	asURL, _ := url.Parse(p.Issuer)
	var final *url.URL
	c := &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: p.Pool},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, p.as.Listener.Addr().String())
			},
		},
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if req.URL.Host != asURL.Host {
				final = req.URL
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if final != nil {
		return final, nil // an error redirect to the client
	}
	// The login page (exampleop): the request id is in the page's URL.
	id := resp.Request.URL.Query().Get("authRequestID")
	if resp.StatusCode != http.StatusOK || id == "" {
		return nil, fmt.Errorf("oauthpeer: no login page (status %d): %.200s", resp.StatusCode, page)
	}
	form := url.Values{"username": {p.Username}, "password": {Password}, "id": {id}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/login/username", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(req)
	if err != nil {
		return nil, err
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if final == nil {
		return nil, fmt.Errorf("oauthpeer: login did not redirect to the client (status %d): %.200s", resp.StatusCode, page)
	}
	return final, nil
}

// authServerMetadata serves RFC 8414 metadata: the provider's discovery
// document with the registration endpoint added,
// client_id_metadata_document_supported when o asks for it, and o's
// token_endpoint_auth_methods_supported when it names one.
func (p *Peer) authServerMetadata(opHandler http.Handler, o Options) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		inner := r.Clone(r.Context())
		inner.URL.Path = "/.well-known/openid-configuration"
		opHandler.ServeHTTP(rec, inner)
		var doc map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
			http.Error(w, "no discovery document", http.StatusInternalServerError)
			return
		}
		doc["registration_endpoint"] = p.Issuer + "/register"
		if o.ClientIDMetadataDocuments {
			doc["client_id_metadata_document_supported"] = true
		}
		if o.TokenEndpointAuthMethods != nil {
			doc["token_endpoint_auth_methods_supported"] = o.TokenEndpointAuthMethods
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}
}

// register is RFC 7591 registration of web clients whose redirect URIs
// are among allowed.
func (p *Peer) register(allowed []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		for _, u := range m.RedirectURIs {
			ok := false
			for _, a := range allowed {
				ok = ok || u == a
			}
			if !ok {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
				return
			}
		}
		id, secret := "dyn-"+uuid.NewString(), uuid.NewString()
		p.store.mu.Lock()
		p.store.dynamic[id] = storage.WebClient(id, secret, m.RedirectURIs...)
		p.store.secrets = append(p.store.secrets, [2]string{id, secret})
		p.store.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "client_secret": secret, "redirect_uris": m.RedirectURIs})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// peerStorage is the example storage with a record of the access tokens
// it issued (for the MCP server's check) and dynamically registered
// clients.
type peerStorage struct {
	*storage.Storage

	mu      sync.Mutex
	issued  map[string]*issued
	byRT    map[string]string // refresh token → access token id
	dynamic map[string]*storage.Client
	secrets [][2]string
	// keyClients is Options.KeyClients (read only).
	keyClients map[string]jose.JSONWebKeySet
	peer       *Peer
}

type issued struct {
	expires time.Time
	scopes  []string
	revoked bool
}

func (s *peerStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if err == nil {
		s.mu.Lock()
		s.issued[id] = &issued{expires: exp, scopes: req.GetScopes()}
		s.mu.Unlock()
	}
	return id, exp, err
}

func (s *peerStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, rt, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	if err == nil {
		s.mu.Lock()
		if s.byRT == nil {
			s.byRT = map[string]string{}
		}
		if old, ok := s.byRT[current]; ok && current != "" {
			if it := s.issued[old]; it != nil {
				it.revoked = true // the storage deletes it too
			}
			delete(s.byRT, current)
		}
		s.byRT[rt] = id
		s.issued[id] = &issued{expires: exp, scopes: req.GetScopes()}
		s.mu.Unlock()
	}
	return id, rt, exp, err
}

func (s *peerStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	c, ok := s.dynamic[id]
	s.mu.Unlock()
	if ok {
		return storage.RedirectGlobsClient(c), nil
	}
	if s.peer.documents != nil && isDocumentURL(id) {
		doc, err := s.peer.documents.load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("client metadata document: %w", err)
		}
		return doc.client, nil
	}
	return s.Storage.GetClientByClientID(ctx, id)
}

func (s *peerStorage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	s.mu.Lock()
	_, ok := s.dynamic[id]
	var want string
	for _, p := range s.secrets {
		if p[0] == id {
			want = p[1]
		}
	}
	s.mu.Unlock()
	if ok {
		if secret != want {
			return errors.New("invalid secret")
		}
		return nil
	}
	return s.Storage.AuthorizeClientIDSecret(ctx, id, secret)
}
