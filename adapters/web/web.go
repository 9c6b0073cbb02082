// Package web is the driving adapter of the admin web interface: the pages
// of the user guide under /ui/, server-rendered with html/template, on the
// same application use cases as the REST API (same rules, gates and error
// codes). Every page works without JavaScript; the one script
// (static/count.js) only shows the live character count of a description.
//
// Security: server-side sessions (see [accounts.SessionHandler]) in the cookie
// codelotse_session (HttpOnly, SameSite=Strict, Secure for an https public
// URL); every state-changing request needs the session's CSRF token and an
// Origin equal to the public URL's; every response carries a
// Content-Security-Policy without inline scripts, X-Frame-Options DENY and
// Referrer-Policy no-referrer; every text is escaped by html/template, and
// text from MCP servers shows its invisible characters as markers.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/rs/zerolog"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// PublicURL is the origin users reach the interface at (QUAVON_PUBLIC_URL),
// "scheme://host[:port]".
type PublicURL string

// Deps are the use cases the pages drive: the same ones the REST API uses.
type Deps struct {
	SignIn           *accounts.SignInHandler
	ResumeSession    *accounts.ResumeSessionHandler
	SignOut          *accounts.SignOutHandler
	Status           *app.StatusHandler
	CreateServer     *registry.CreateServerHandler
	GetServer        *registry.GetServerHandler
	ListServers      *registry.ListServersHandler
	PatchServer      *registry.PatchServerHandler
	DeleteServer     *registry.DeleteServerHandler
	Discover         *registry.DiscoverServerHandler
	SaveTools        *registry.SaveToolsHandler
	ApproveTool      *registry.ApproveToolHandler
	RemoveTool       *registry.RemoveToolHandler
	TestConnection   *registry.TestConnectionHandler
	FindIssuer       *registry.FindIssuerHandler
	StartConnect     *registry.StartConnectHandler
	FinishConnect    *registry.FinishConnectHandler
	Calls            *registry.ListCallsHandler
	Findings         *registry.Findings
	CreateRepository *repositories.CreateRepositoryHandler
	GetRepository    *repositories.GetRepositoryHandler
	UpdateRepository *repositories.UpdateRepositoryHandler
	ListRepositories *repositories.ListRepositoriesHandler
	UsingServer      *repositories.RepositoriesUsingServerHandler
	GetSettings      *accounts.GetSettingsHandler
	PutSettings      *accounts.PutSettingsHandler
	ListTokens       *accounts.ListTokensHandler
	CreateToken      *accounts.CreateTokenHandler
	RevokeToken      *accounts.RevokeTokenHandler
	Prompts          *reviews.ListPromptsHandler
	GetPolicy        *repositories.GetPolicyHandler
	PutPolicy        *repositories.PutPolicyHandler
	PolicyServers    *repositories.ListPolicyServersHandler
	GetDefaults      *repositories.GetDefaultsHandler
	PutDefaults      *repositories.PutDefaultsHandler
	AuditPage        *accounts.AuditPageHandler
	SubmitReview     *reviews.SubmitReviewHandler
	GetReview        *reviews.GetReviewHandler
	ListReviews      *reviews.ListReviewsHandler
	ListReviewCalls  *reviews.ListReviewCallsHandler
	// Proxies decide which address is a sign-in's client
	// (QUAVON_TRUSTED_PROXIES); the zero value trusts none.
	Proxies netpolicy.TrustedProxies
	// Allowed is the operator's allowlist of MCP server URLs
	// (QUAVON_MCP_ALLOWED_URLS), which a server's status reads; the zero
	// value allows any URL.
	Allowed server.AllowedURLs
}

// UI is the web interface's handler, mounted at /ui/ (and / redirecting
// there). Safe for concurrent use.
type UI struct {
	d      Deps
	origin atomic.Pointer[string]
	secure bool
	log    zerolog.Logger
	pages  map[string]*template.Template
	mux    *http.ServeMux
}

// New parses the templates and registers the pages.
func New(public PublicURL, d Deps, log zerolog.Logger) (*UI, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	u := &UI{d: d, secure: strings.HasPrefix(string(public), "https://"), log: log, pages: pages, mux: http.NewServeMux()}
	origin := string(public)
	u.origin.Store(&origin)
	u.routes()
	return u, nil
}

// Listening is told the address the server bound. A public URL whose port
// is 0 (the default, http:// and QUAVON_HTTP_ADDR, with a random port)
// becomes the bound address, so the Origin check compares with the origin
// browsers really use.
func (u *UI) Listening(addr net.Addr) {
	cur := *u.origin.Load()
	if !strings.HasSuffix(cur, ":0") {
		return
	}
	scheme, _, _ := strings.Cut(cur, "://")
	bound := scheme + "://" + addr.String()
	u.origin.Store(&bound)
}

// ServeHTTP serves /ui/ with the security headers on every response.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if u.refuseInput(w, r, nil, r.URL.Query(), "parameter") {
		return
	}
	u.mux.ServeHTTP(w, r)
}

// contentSecurityPolicy allows this origin's stylesheet and script files
// only: no inline script or style, no frames, forms posting here only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (u *UI) routes() {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	u.mux.Handle("GET /ui/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Files only: a directory (the static root included) is not
		// listed, it is the site's 404 page.
		name := strings.TrimPrefix(r.URL.Path, "/ui/static/")
		if info, err := fs.Stat(static, name); err != nil || info.IsDir() {
			u.noSuchPage(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	u.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	u.mux.HandleFunc("GET /ui/login", u.loginPage)
	u.mux.HandleFunc("POST /ui/login", u.sameOrigin(u.login))
	u.mux.HandleFunc("POST /ui/logout", u.state("", u.logout))
	u.mux.HandleFunc("GET /ui/{$}", u.view("", u.home))

	u.mux.HandleFunc("GET /ui/servers", u.view(app.PermTenantManage, u.serversPage))
	u.mux.HandleFunc("GET /ui/servers/new", u.view(app.PermTenantManage, u.newServerPage))
	u.mux.HandleFunc("POST /ui/servers", u.state(app.PermTenantManage, u.createServer))
	u.mux.HandleFunc("POST /ui/servers/test", u.state(app.PermTenantManage, u.testNewServer))
	u.mux.HandleFunc("POST /ui/servers/issuer", u.state(app.PermTenantManage, u.findIssuer))
	u.mux.HandleFunc("GET /ui/servers/{id}", u.view(app.PermTenantManage, u.serverPage))
	u.mux.HandleFunc("POST /ui/servers/{id}", u.state(app.PermTenantManage, u.editServer))
	u.mux.HandleFunc("POST /ui/servers/{id}/enabled", u.state(app.PermTenantManage, u.enableServer))
	u.mux.HandleFunc("GET /ui/servers/{id}/delete", u.view(app.PermTenantManage, u.deleteServerPage))
	u.mux.HandleFunc("POST /ui/servers/{id}/delete", u.state(app.PermTenantManage, u.deleteServer))
	u.mux.HandleFunc("POST /ui/servers/{id}/discover", u.state(app.PermTenantManage, u.discover))
	u.mux.HandleFunc("POST /ui/servers/{id}/tools", u.state(app.PermTenantManage, u.saveTools))
	u.mux.HandleFunc("POST /ui/servers/{id}/tools/{name}/approve", u.state(app.PermTenantManage, u.approveTool))
	u.mux.HandleFunc("POST /ui/servers/{id}/tools/{name}/remove", u.state(app.PermTenantManage, u.removeTool))
	u.mux.HandleFunc("POST /ui/servers/{id}/test", u.state(app.PermTenantManage, u.testServer))
	u.mux.HandleFunc("POST /ui/servers/{id}/connect", u.state(app.PermTenantManage, u.connectServer))
	u.mux.HandleFunc("GET "+CallbackPath, u.oauthCallback)

	u.mux.HandleFunc("GET /ui/repositories", u.view("", u.repositoriesPage))
	u.mux.HandleFunc("POST /ui/repositories", u.state(app.PermTenantManage, u.createRepository))
	u.mux.HandleFunc("GET /ui/repositories/{id}", u.view("", u.repositoryPage))
	u.mux.HandleFunc("POST /ui/repositories/{id}/policy", u.state(app.PermRepoManage, u.putPolicy))
	u.mux.HandleFunc("POST /ui/repositories/{id}/visibility", u.state(app.PermTenantManage, u.setVisibility))
	u.mux.HandleFunc("GET /ui/defaults", u.view(app.PermTenantManage, u.defaultsPage))
	u.mux.HandleFunc("POST /ui/defaults", u.state(app.PermTenantManage, u.putDefaults))

	u.mux.HandleFunc("GET /ui/reviews", u.view(app.PermRepoManage, u.reviewsPage))
	u.mux.HandleFunc("GET /ui/reviews/{id}", u.view(app.PermRepoManage, u.reviewPage))
	u.mux.HandleFunc("GET /ui/reviews/{id}/prompts", u.view(app.PermTenantManage, u.promptsPage))
	u.mux.HandleFunc("GET /ui/audit", u.view(app.PermTenantManage, u.auditPage))
	u.mux.HandleFunc("GET /ui/settings", u.view(app.PermTenantManage, u.settingsPage))
	u.mux.HandleFunc("POST /ui/settings", u.state(app.PermTenantManage, u.putSettings))
	u.mux.HandleFunc("GET /ui/tokens", u.view(app.PermTenantManage, u.tokensPage))
	u.mux.HandleFunc("POST /ui/tokens", u.state(app.PermTenantManage, u.createToken))
	u.mux.HandleFunc("POST /ui/tokens/{id}/revoke", u.state(app.PermTenantManage, u.revokeToken))

	u.mux.HandleFunc("/ui/", u.noSuchPage)
}

func (u *UI) noSuchPage(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusNotFound, "message", nil, messagePage{Heading: "Not found", Text: "There is no such page."})
}
