package web_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// These tests drive the web interface through httptest against the real
// use cases and PostgreSQL; only the MCP server (a fake connector), DNS and
// the clock are stand-ins.

var (
	openGates   = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}
	closedGates = app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// publicResolver answers one public address for every host.
type publicResolver struct{}

func (publicResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// fakeMCP is the MCP server: whatever tools the test puts in it.
type fakeMCP struct {
	mu    sync.Mutex
	tools []ports.ListedTool
}

func (f *fakeMCP) set(t *testing.T, defs ...[3]string) {
	t.Helper()
	var listed []ports.ListedTool
	for _, d := range defs {
		def, err := tool.NewDefinition(d[0], d[1], json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`), json.RawMessage(d[2]))
		if err != nil {
			t.Fatalf("NewDefinition(%q): %v", d[0], err)
		}
		listed = append(listed, ports.ListedTool{Name: d[0], Description: d[1], Definition: def})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = listed
}

func (f *fakeMCP) Open(context.Context, ports.MCPTarget, int64) (ports.MCPSession, error) {
	return f, nil
}

func (f *fakeMCP) ListTTL() time.Duration { return 0 }

func (f *fakeMCP) ListTools(context.Context) ([]ports.ListedTool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ports.ListedTool{}, f.tools...), nil
}

func (f *fakeMCP) CallTool(context.Context, string, tool.Arguments) (ports.ToolResult, error) {
	return ports.ToolResult{}, nil
}

func (f *fakeMCP) Close() error { return nil }

type harness struct {
	t  *testing.T
	db *postgres.DB
	// su is the same database as the admin role, for checks and changes
	// past row-level security (db is its non-superuser owner, pgtest).
	su     *postgres.DB
	clock  *testClock
	mcp    *fakeMCP
	oauth  *portfake.OAuthClient
	base   string
	tenant string
	admin  accounts.Deps
	// ui is the handler the test server serves (for requests from
	// another client address).
	ui http.Handler
	// allowed is the operator's allowlist of URLs depsOf builds with
	// (zero: any URL).
	allowed server.AllowedURLs
}

// newHarness serves the web interface with gates on a fresh database.
func newHarness(t *testing.T, gates app.Gates) *harness {
	t.Helper()
	return newHarnessOn(t, pgtest.New(t), gates)
}

// newHarnessOn is newHarness on the database db.
func newHarnessOn(t *testing.T, db *postgres.DB, gates app.Gates) *harness {
	t.Helper()
	h := &harness{t: t, db: db, su: pgtest.Superuser(t, db), clock: &testClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}, mcp: &fakeMCP{}, oauth: newFakeOAuth()}
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	h.base = srv.URL

	h.admin = accounts.Deps{Accounts: postgres.NewAccounts(db), Tenants: postgres.NewTenants(db), Clock: h.clock, Rand: rand.Reader}
	ui, err := web.New(web.PublicURL(srv.URL), h.depsOf(gates), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	handler, h.ui = ui, ui
	h.tenant, err = accounts.NewCreateTenantHandler(h.admin).Handle(t.Context(), accounts.CreateTenant{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) token(perms ...string) string {
	h.t.Helper()
	tok, err := accounts.NewCreateTokenHandler(h.admin).Handle(h.t.Context(), accounts.CreateToken{TenantID: h.tenant, Permissions: perms})
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// browser is a client with a cookie jar that does not follow redirects,
// sends the right Origin and remembers the last page's CSRF token.
type browser struct {
	h      *harness
	c      *http.Client
	origin string
	csrf   string
}

type page struct {
	status int
	header http.Header
	body   string
}

func (h *harness) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{h: h, origin: h.base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn opens a session with a new token of perms.
func (h *harness) signIn(perms ...string) (*browser, string) {
	b := h.browser()
	tok := h.token(perms...)
	p := b.post("/ui/login", url.Values{"token": {tok}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
		h.t.Fatalf("sign in = %d %q, want 303 to /ui/", p.status, p.header.Get("Location"))
	}
	return b, tok
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (b *browser) do(req *http.Request) page {
	b.h.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfField.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1]
	}
	return page{status: res.StatusCode, header: res.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest(http.MethodGet, b.h.base+path, nil)
	return b.do(req)
}

// post sends a form with the page's CSRF token (unless form sets one).
func (b *browser) post(path string, form url.Values) page {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok && b.csrf != "" {
		form.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.h.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	return b.do(req)
}

// register registers a server through the form and returns its page path.
func (b *browser) register(name string) string {
	b.h.t.Helper()
	b.get("/ui/servers/new")
	p := b.post("/ui/servers", url.Values{"name": {name}, "url": {"https://" + name + ".example.com/mcp"}, "auth": {"none"}, "acknowledged": {"on"}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/servers/") {
		b.h.t.Fatalf("register %s = %d %q\n%s", name, p.status, loc, p.body)
	}
	path, _, _ := strings.Cut(loc, "?")
	return path
}

func (h *harness) count(table string) int {
	h.t.Helper()
	var n int
	if err := h.su.Bun().NewRaw("SELECT count(*) FROM "+table).Scan(h.t.Context(), &n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// depsOf builds the real use cases on the harness's database, clock and
// fake MCP server.
func (h *harness) depsOf(gates app.Gates) web.Deps {
	tenants := postgres.NewTenants(h.db)
	store := postgres.NewAccounts(h.db)
	ad := accounts.Deps{Accounts: store, Tenants: tenants, Sessions: postgres.NewSessions(h.db), Clock: h.clock, Rand: rand.Reader, Limiter: accounts.NewAuthLimiter(h.clock)}
	vd := reviews.Deps{Tenants: tenants, Cipher: app.NewVault(xorCipher{}), Clock: h.clock, NewID: uuid.NewString}
	sd := registry.ServerDeps{Tenants: tenants, Cipher: app.NewVault(xorCipher{}), Resolver: publicResolver{}, Clock: h.clock, Gates: gates,
		Rules: netpolicy.NewRules(gate.SelfHosted, netpolicy.PrivateHosts{}), NewID: uuid.NewString, Allowed: h.allowed}
	rd := repositories.Deps{Tenants: tenants, Clock: h.clock, NewID: uuid.NewString, Gates: gates}
	dd := registry.DiscoveryDeps{Tenants: tenants, Cipher: app.NewVault(xorCipher{}), Connector: h.mcp, Clock: h.clock, Gates: gates, Findings: registry.NewFindings(portfake.Scanner{}), Allowed: h.allowed}
	cd := registry.ConnectDeps{Tenants: tenants, Cipher: app.NewVault(xorCipher{}), OAuth: h.oauth, Clock: h.clock, Gates: gates, Rand: rand.Reader, Allowed: h.allowed}
	return web.Deps{
		SignIn: accounts.NewSignInHandler(ad), ResumeSession: accounts.NewResumeSessionHandler(ad), SignOut: accounts.NewSignOutHandler(ad),
		Status:       app.NewStatusHandler(gates),
		CreateServer: registry.NewCreateServerHandler(sd), GetServer: registry.NewGetServerHandler(sd),
		ListServers: registry.NewListServersHandler(sd), PatchServer: registry.NewPatchServerHandler(sd),
		DeleteServer: registry.NewDeleteServerHandler(sd),
		Discover:     registry.NewDiscoverServerHandler(dd), SaveTools: registry.NewSaveToolsHandler(dd), Calls: registry.NewListCallsHandler(dd),
		ApproveTool: registry.NewApproveToolHandler(dd), RemoveTool: registry.NewRemoveToolHandler(dd),
		TestConnection: registry.NewTestConnectionHandler(sd, dd),
		Findings:       dd.Findings,
		StartConnect:   registry.NewStartConnectHandler(cd), FinishConnect: registry.NewFinishConnectHandler(cd),
		FindIssuer:       registry.NewFindIssuerHandler(sd, cd),
		CreateRepository: repositories.NewCreateRepositoryHandler(rd), GetRepository: repositories.NewGetRepositoryHandler(rd),
		UpdateRepository: repositories.NewUpdateRepositoryHandler(rd), ListRepositories: repositories.NewListRepositoriesHandler(rd),
		UsingServer: repositories.NewRepositoriesUsingServerHandler(rd),
		GetSettings: accounts.NewGetSettingsHandler(ad), PutSettings: accounts.NewPutSettingsHandler(ad),
		ListTokens: accounts.NewListTokensHandler(ad), CreateToken: accounts.NewCreateTokenHandler(ad), RevokeToken: accounts.NewRevokeTokenHandler(ad),
		Prompts:   reviews.NewListPromptsHandler(vd),
		GetPolicy: repositories.NewGetPolicyHandler(rd), PutPolicy: repositories.NewPutPolicyHandler(rd),
		PolicyServers: repositories.NewListPolicyServersHandler(rd),
		GetDefaults:   repositories.NewGetDefaultsHandler(rd), PutDefaults: repositories.NewPutDefaultsHandler(rd),
		AuditPage:    accounts.NewAuditPageHandler(ad),
		SubmitReview: reviews.NewSubmitReviewHandler(vd), GetReview: reviews.NewGetReviewHandler(vd),
		ListReviews: reviews.NewListReviewsHandler(vd), ListReviewCalls: reviews.NewListReviewCallsHandler(vd),
		Allowed: h.allowed,
	}
}

// deps builds the use cases again for a second UI on the same database.
func (h *harness) deps() web.Deps { return h.depsOf(openGates) }

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func newFormRequest(path string, form url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// allowDiscovery moves every server's last discovery back past the 10 s
// throttle, which runs on the database's clock.
func (h *harness) allowDiscovery() {
	h.t.Helper()
	if _, err := h.su.Bun().NewRaw("UPDATE mcp_servers SET last_discovery_at = last_discovery_at - interval '1 minute', last_listing_at = last_listing_at - interval '1 minute'").Exec(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
}

// xorCipher stands in for the key ring: these tests check what the pages
// show, never the encryption (adapters/crypto has its own tests).
type xorCipher struct{}

func (xorCipher) Seal(plaintext, _ []byte) ([]byte, error)  { return xor(plaintext), nil }
func (xorCipher) Open(ciphertext, _ []byte) ([]byte, error) { return xor(ciphertext), nil }
func (xorCipher) IsPrimary([]byte) bool                     { return true }

func xor(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = c ^ 0x5a
	}
	return out
}
