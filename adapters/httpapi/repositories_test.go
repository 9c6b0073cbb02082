package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// restStore is one in-memory tenant store behind every REST route test:
// repositories, policies, servers and audit events, keyed by tenant.
type restStore struct {
	mu       sync.Mutex
	repos    map[string]map[string]repository.Repository
	defaults map[string]policy.McpSection
	policies map[string]map[string]policy.McpSection
	servers  map[string]map[string]bool
	events   map[string][]ports.AuditEvent
	settings map[string]settings.Settings
	// promptDeletes counts PromptLogs().DeleteAll per tenant.
	promptDeletes map[string]int
}

func newRestStore() *restStore {
	return &restStore{
		repos:    map[string]map[string]repository.Repository{},
		defaults: map[string]policy.McpSection{},
		policies: map[string]map[string]policy.McpSection{},
		servers:  map[string]map[string]bool{},
		events:   map[string][]ports.AuditEvent{},
		settings: map[string]settings.Settings{},

		promptDeletes: map[string]int{},
	}
}

func (s *restStore) ReadInTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	return s.InTenant(ctx, tenantID, fn)
}

func (s *restStore) InTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos[tenantID] == nil {
		s.repos[tenantID] = map[string]repository.Repository{}
		s.policies[tenantID] = map[string]policy.McpSection{}
	}
	return fn(ctx, &restTx{s: s, tenant: tenantID})
}

type restTx struct {
	s      *restStore
	tenant string
}

func (t *restTx) Servers() ports.ServerRepo          { return &restServers{t: t} }
func (t *restTx) Repositories() ports.RepositoryRepo { return t }
func (t *restTx) Policies() ports.PolicyRepo         { return (*restPolicies)(t) }
func (t *restTx) Audit() ports.AuditLog              { return (*restAudit)(t) }
func (t *restTx) Calls() ports.CallLog               { return nil }
func (t *restTx) Reviews() ports.ReviewRepo          { return nil }
func (t *restTx) Settings() ports.SettingsRepo       { return (*restSettings)(t) }
func (t *restTx) PromptLogs() ports.PromptLogRepo    { return (*restPromptLogs)(t) }
func (t *restTx) OAuthStates() ports.OAuthStateRepo  { return nil }

func (t *restTx) List(_ context.Context, after string, limit int) ([]*repository.Repository, error) {
	var out []*repository.Repository
	for _, r := range t.s.repos[t.tenant] {
		if r.Name() > after {
			out = append(out, &r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out[:min(limit, len(out))], nil
}

// restSettings keeps settings per tenant (the defaults until a Put).
type restSettings restTx

func (t *restSettings) Get(context.Context) (settings.Settings, error) {
	if s, ok := t.s.settings[t.tenant]; ok {
		return s, nil
	}
	return settings.Default(), nil
}

func (t *restSettings) GetForUpdate(ctx context.Context) (settings.Settings, error) {
	return t.Get(ctx)
}

func (t *restSettings) Put(_ context.Context, s settings.Settings) error {
	t.s.settings[t.tenant] = s
	return nil
}

// restPromptLogs holds no log; DeleteAll counts its calls.
type restPromptLogs restTx

func (t *restPromptLogs) Insert(context.Context, ports.PromptLog) error { return nil }
func (t *restPromptLogs) List(context.Context, string, time.Time) ([]ports.PromptLog, error) {
	return nil, nil
}
func (t *restPromptLogs) DeleteAll(context.Context) (int64, error) {
	t.s.promptDeletes[t.tenant]++
	return 0, nil
}

func (t *restTx) Insert(_ context.Context, r *repository.Repository) error {
	for _, have := range t.s.repos[t.tenant] {
		if have.Name() == r.Name() {
			return ports.ErrConflict
		}
	}
	t.s.repos[t.tenant][r.ID()] = *r
	return nil
}

func (t *restTx) Get(_ context.Context, id string) (*repository.Repository, error) {
	r, ok := t.s.repos[t.tenant][id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return &r, nil
}

func (t *restTx) Update(ctx context.Context, id string, fn func(*repository.Repository) error) (*repository.Repository, error) {
	r, err := t.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := fn(r); err != nil {
		return nil, err
	}
	t.s.repos[t.tenant][id] = *r
	return r, nil
}

type restPolicies restTx

func (t *restPolicies) Default(context.Context) (*policy.McpSection, error) {
	s, ok := t.s.defaults[t.tenant]
	if !ok {
		return nil, nil
	}
	return &s, nil
}

func (t *restPolicies) PutDefault(_ context.Context, s policy.McpSection) error {
	t.s.defaults[t.tenant] = s
	return nil
}

func (t *restPolicies) Repository(_ context.Context, id string) (policy.McpSection, bool, error) {
	s, ok := t.s.policies[t.tenant][id]
	return s, ok, nil
}

func (t *restPolicies) PutRepository(_ context.Context, id string, s policy.McpSection) error {
	t.s.policies[t.tenant][id] = s
	return nil
}

func (t *restPolicies) Repositories(ctx context.Context, ids []string) (*policy.McpSection, map[string]policy.McpSection, error) {
	def, err := t.Default(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]policy.McpSection{}
	for _, id := range ids {
		if s, ok := t.s.policies[t.tenant][id]; ok {
			out[id] = s
		}
	}
	return def, out, nil
}

func (t *restPolicies) ServersExist(_ context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = t.s.servers[t.tenant][id]
	}
	return out, nil
}

type restAudit restTx

func (t *restAudit) Append(_ context.Context, e ports.AuditEvent) error {
	t.s.events[t.tenant] = append(t.s.events[t.tenant], e)
	return nil
}

func (t *restAudit) Recent(_ context.Context, limit int) ([]ports.AuditEvent, error) {
	var out []ports.AuditEvent
	ev := t.s.events[t.tenant]
	for i := len(ev) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, ev[i])
	}
	return out, nil
}

// restTokens maps fixed bearer tokens to principals.
type restTokens map[string]ports.Principal

func (m restTokens) Handle(_ context.Context, q accounts.Authenticate) (ports.Principal, error) {
	token := q.Token
	p, ok := m[token]
	if !ok {
		return ports.Principal{}, ports.ErrNotFound
	}
	return p, nil
}

type restReady struct{}

func (restReady) Ping(context.Context) error { return nil }

type restClock struct{}

func (restClock) Now() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

const (
	restTenantA = "aaaaaaaa-0000-4000-8000-000000000001"
	restTenantB = "bbbbbbbb-0000-4000-8000-000000000002"
	restServerA = "a1a1a1a1-0000-4000-8000-000000000001"
	restServerB = "b1b1b1b1-0000-4000-8000-000000000001"
)

// newRestAPI serves the REST route groups over the store with the given
// gates. Tokens: "admin" (both permissions), "repo" (repo:manage only),
// "other" (both, another tenant).
func newRestAPI(t *testing.T, gates app.Gates) (*httptest.Server, *restStore) {
	t.Helper()
	store := newRestStore()
	store.servers[restTenantA] = map[string]bool{restServerA: true}
	store.servers[restTenantB] = map[string]bool{restServerB: true}
	both := []string{app.PermTenantManage, app.PermRepoManage}
	tokens := restTokens{
		"admin": {TokenID: "t1", TenantID: restTenantA, Permissions: both},
		"repo":  {TokenID: "t2", TenantID: restTenantA, Permissions: []string{app.PermRepoManage}},
		"other": {TokenID: "t3", TenantID: restTenantB, Permissions: both},
	}
	ad := accounts.Deps{Tenants: store, Cipher: app.NewVault(restKeys), Clock: restClock{}}
	rd := repositories.Deps{Tenants: store, Clock: restClock{}, NewID: uuid.NewString, Gates: gates}
	routes := []httpapi.Routes{
		httpapi.NewStatusRoutes(app.NewStatusHandler(gates)),
		httpapi.NewRepositoryRoutes(repositories.NewCreateRepositoryHandler(rd), repositories.NewGetRepositoryHandler(rd),
			repositories.NewUpdateRepositoryHandler(rd), repositories.NewListRepositoriesHandler(rd)),
		httpapi.NewSettingsRoutes(accounts.NewGetSettingsHandler(ad), accounts.NewPutSettingsHandler(ad), reviews.NewListPromptsHandler(reviews.Deps{Tenants: store, Cipher: app.NewVault(restKeys), Clock: restClock{}})),
		httpapi.NewPolicyRoutes(repositories.NewGetDefaultsHandler(rd), repositories.NewPutDefaultsHandler(rd),
			repositories.NewGetPolicyHandler(rd), repositories.NewPutPolicyHandler(rd), repositories.NewListPolicyServersHandler(rd)),
		httpapi.NewAuditRoutes(accounts.NewListAuditHandler(ad)),
	}
	srv := httpapi.NewServer("127.0.0.1:0", zerolog.Nop(), restReady{}, tokens, gates, netpolicy.TrustedProxies{}, routes, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, store
}

var restOpen = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}

// call sends a request and decodes the JSON answer into a map.
func call(t *testing.T, ts *httptest.Server, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body %q is not JSON: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, out
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestRepositoryRoutes(t *testing.T) {
	ts, _ := newRestAPI(t, restOpen)
	status, body := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	if status != http.StatusCreated || body["name"] != "acme/api" || body["visibility"] != "private" || len(body) != 3 {
		t.Fatalf("POST = %d %v", status, body)
	}
	id, _ := body["id"].(string)

	tests := []struct {
		name, token, method, path, body string
		status                          int
		code                            string
	}{
		{"get", "admin", "GET", "/v1/repositories/" + id, "", 200, ""},
		{"patch", "admin", "PATCH", "/v1/repositories/" + id, `{"visibility": "internal"}`, 200, ""},
		{"patch nothing", "admin", "PATCH", "/v1/repositories/" + id, `{}`, 200, ""},
		{"duplicate", "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "public"}`, 409, "name_taken"},
		{"no token", "", "POST", "/v1/repositories", `{"name": "x", "visibility": "public"}`, 401, "unauthenticated"},
		{"bad token", "nope", "GET", "/v1/repositories/" + id, "", 401, "unauthenticated"},
		{"repo token", "repo", "POST", "/v1/repositories", `{"name": "x", "visibility": "public"}`, 403, "forbidden"},
		{"unknown field", "admin", "POST", "/v1/repositories", `{"name": "x", "visibility": "public", "owner": "me"}`, 400, "bad_json"},
		{"bad visibility", "admin", "POST", "/v1/repositories", `{"name": "x", "visibility": "secret"}`, 422, "validation_failed"},
		{"other tenant", "other", "GET", "/v1/repositories/" + id, "", 404, "not_found"},
		{"malformed id", "admin", "PATCH", "/v1/repositories/1%20OR%201", `{"visibility": "public"}`, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, ts, tt.token, tt.method, tt.path, tt.body)
			if status != tt.status || errCode(body) != tt.code {
				t.Fatalf("%s %s = %d %v, want %d %q", tt.method, tt.path, status, body, tt.status, tt.code)
			}
		})
	}
	if _, body := call(t, ts, "admin", "GET", "/v1/repositories/"+id, ""); body["visibility"] != "internal" {
		t.Errorf("after PATCH: %v", body)
	}
}

// restServers lists the tenant's servers (restServerNames); every other
// method of the port is nil: no route test of this store changes servers.
type restServers struct {
	ports.ServerRepo
	t *restTx
}

// restServerNames are the names of the store's servers.
var restServerNames = map[string]string{restServerA: "wiki", restServerB: "tickets"}

func (s *restServers) List(context.Context) ([]*server.Server, error) {
	var out []*server.Server
	for id := range s.t.s.servers[s.t.tenant] {
		name, _ := server.ParseName(restServerNames[id])
		u, _ := server.ParseURL("https://" + restServerNames[id] + ".example.com/mcp")
		srv, err := server.NewServer(id, s.t.tenant, name, u, server.NoCredential(), true, restClock{}.Now())
		if err != nil {
			return nil, err
		}
		out = append(out, srv)
	}
	return out, nil
}
