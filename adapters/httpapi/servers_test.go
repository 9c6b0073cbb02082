package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
	"github.com/rs/zerolog"
)

// These tests drive the server routes through the real app handlers over
// small in-memory fakes; the black-box suite against PostgreSQL lives elsewhere.

const (
	srvTenantA = "aaaaaaaa-0000-4000-8000-00000000000a"
	srvTenantB = "bbbbbbbb-0000-4000-8000-00000000000b"
	srvSecret  = "sk-live-SUPERSECRET-wxyz"
)

var srvOpenGates = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}

type srvStore struct {
	mu      sync.Mutex
	servers map[string]map[string]*server.Server
	creds   map[string][]byte
	events  []ports.AuditEvent
}

type srvTx struct {
	s      *srvStore
	tenant string
}

func (s *srvStore) ReadInTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	return s.InTenant(ctx, tenantID, fn)
}

func (s *srvStore) InTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.servers[tenantID] == nil {
		s.servers[tenantID] = map[string]*server.Server{}
	}
	return fn(ctx, &srvTx{s: s, tenant: tenantID})
}

func (t *srvTx) Servers() ports.ServerRepo          { return t }
func (t *srvTx) Repositories() ports.RepositoryRepo { return nil }
func (t *srvTx) Policies() ports.PolicyRepo         { return nil }
func (t *srvTx) Audit() ports.AuditLog              { return t }
func (t *srvTx) Calls() ports.CallLog               { return nil }
func (t *srvTx) Reviews() ports.ReviewRepo          { return nil }
func (t *srvTx) Settings() ports.SettingsRepo       { return nil }
func (t *srvTx) PromptLogs() ports.PromptLogRepo    { return nil }
func (t *srvTx) OAuthStates() ports.OAuthStateRepo  { return nil }

func (t *srvTx) RecordListTTL(context.Context, string, time.Duration) error {
	return errors.New("srvTx: no discovery in these tests")
}

func (t *srvTx) ClaimDiscovery(context.Context, string, time.Duration, ports.Listing) (bool, time.Duration, error) {
	return false, 0, errors.New("srvTx: no discovery in these tests")
}

func (t *srvTx) ClaimConnectionTest(context.Context, int, time.Duration) (bool, time.Duration, error) {
	return false, 0, errors.New("srvTx: no connection test in these tests")
}

func (t *srvTx) TakeCall(context.Context, string, int, time.Duration) (bool, error) {
	return false, errors.New("srvTx: no tool call in these tests")
}

func (t *srvTx) rows() map[string]*server.Server { return t.s.servers[t.tenant] }

func (t *srvTx) Insert(_ context.Context, s *server.Server, enc []byte, max int) error {
	if len(t.rows()) >= max {
		return ports.ErrTooManyServers
	}
	for _, have := range t.rows() {
		if have.Name() == s.Name() {
			return ports.ErrNameTaken
		}
	}
	c := *s
	t.rows()[s.ID()] = &c
	t.s.creds[s.ID()] = enc
	return nil
}

func (t *srvTx) Get(_ context.Context, id string) (*server.Server, error) {
	s, ok := t.rows()[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	c := *s
	return &c, nil
}

func (t *srvTx) List(_ context.Context) ([]*server.Server, error) {
	var out []*server.Server
	for _, s := range t.rows() {
		c := *s
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *server.Server) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	return out, nil
}

func (t *srvTx) Update(ctx context.Context, id string, fn func(*server.Server) (ports.CredentialUpdate, error)) (*server.Server, error) {
	s, err := t.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	cu, err := fn(s)
	if err != nil {
		return nil, err
	}
	c := *s
	t.rows()[id] = &c
	if cu.Replace {
		t.s.creds[id] = cu.Encrypted
	}
	return s, nil
}

func (t *srvTx) Delete(_ context.Context, id string) error {
	if _, ok := t.rows()[id]; !ok {
		return ports.ErrNotFound
	}
	delete(t.rows(), id)
	delete(t.s.creds, id)
	return nil
}

func (t *srvTx) Credential(_ context.Context, id string) ([]byte, error) { return t.s.creds[id], nil }

func (t *srvTx) Append(_ context.Context, e ports.AuditEvent) error {
	t.s.events = append(t.s.events, e)
	return nil
}

func (t *srvTx) Recent(context.Context, int) ([]ports.AuditEvent, error) { return t.s.events, nil }

type srvResolver map[string][]netip.Addr

func (r srvResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("lookup " + host + ": no such host")
}

// srvCipher hex-encodes: the secret never appears verbatim in the store.
type srvCipher struct{}

func (srvCipher) Seal(p, aad []byte) ([]byte, error) {
	return []byte(string(aad) + "|" + hex.EncodeToString(p)), nil
}
func (srvCipher) Open(c, aad []byte) ([]byte, error) {
	_, h, _ := strings.Cut(string(c), "|")
	return hex.DecodeString(h)
}
func (srvCipher) IsPrimary([]byte) bool { return true }

type srvClock struct{}

func (srvClock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 123000000, time.UTC) }

type srvTokens map[string]ports.Principal

func (m srvTokens) Handle(_ context.Context, q accounts.Authenticate) (ports.Principal, error) {
	token := q.Token
	if p, ok := m[token]; ok {
		return p, nil
	}
	return ports.Principal{}, ports.ErrNotFound
}

type srvReady struct{}

func (srvReady) Ping(context.Context) error { return nil }

// newServerAPI serves the server routes over store with gates. Tokens:
// "admin" (tenant:manage, tenant A), "repo" (repo:manage only), "other"
// (tenant:manage, tenant B).
func newServerAPI(t *testing.T, store *srvStore, gates app.Gates) *httptest.Server {
	t.Helper()
	return newServerAPIAllowing(t, store, gates, server.AllowedURLs{})
}

// newServerAPIAllowing is newServerAPI under the operator's allowlist of
// URLs allowed.
func newServerAPIAllowing(t *testing.T, store *srvStore, gates app.Gates, allowed server.AllowedURLs, opts ...func(*registry.ServerDeps)) *httptest.Server {
	t.Helper()
	n := 0
	deps := registry.ServerDeps{
		Tenants: store,
		Cipher:  app.NewVault(srvCipher{}),
		Resolver: srvResolver{
			"wiki.example.com": {netip.MustParseAddr("93.184.216.34")},
			"docs.example.com": {netip.MustParseAddr("93.184.216.35")},
			"intra.example":    {netip.MustParseAddr("10.0.0.5")},
		},
		Clock:   srvClock{},
		Gates:   gates,
		Rules:   netpolicy.NewRules(gate.SelfHosted, netpolicy.PrivateHosts{}),
		NewID:   func() string { n++; return fmt.Sprintf("%08x-3333-4333-8333-333333333333", n) },
		Allowed: allowed,
	}
	for _, o := range opts {
		o(&deps)
	}
	routes := NewServerRoutes(registry.NewCreateServerHandler(deps), registry.NewGetServerHandler(deps),
		registry.NewListServersHandler(deps), registry.NewPatchServerHandler(deps), registry.NewDeleteServerHandler(deps), testFindings, allowed)
	tokens := srvTokens{
		"admin": {TokenID: "t1", TenantID: srvTenantA, Permissions: []string{app.PermTenantManage}},
		"repo":  {TokenID: "t2", TenantID: srvTenantA, Permissions: []string{app.PermRepoManage}},
		"other": {TokenID: "t3", TenantID: srvTenantB, Permissions: []string{app.PermTenantManage}},
	}
	ts := httptest.NewServer(NewServer("127.0.0.1:0", zerolog.Nop(), srvReady{}, tokens, gates, netpolicy.TrustedProxies{}, []Routes{routes}, nil).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func newSrvStore() *srvStore {
	return &srvStore{servers: map[string]map[string]*server.Server{}, creds: map[string][]byte{}}
}

// srvCall sends a request and returns the status and the raw body.
func srvCall(t *testing.T, ts *httptest.Server, token, method, path, body string) (int, []byte) {
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
	return resp.StatusCode, raw
}

func srvJSON(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", raw, err)
	}
	return m
}

func srvErr(t *testing.T, raw []byte) (string, map[string]any) {
	t.Helper()
	e, _ := srvJSON(t, raw)["error"].(map[string]any)
	code, _ := e["code"].(string)
	fields, _ := e["fields"].(map[string]any)
	return code, fields
}

const srvCreateBody = `{"name": "wiki", "url": "https://wiki.example.com/mcp",
	"auth": {"type": "bearer", "token": "` + srvSecret + `"}, "acknowledged": true}`

func TestServerRoutesLifecycle(t *testing.T) {
	store := newSrvStore()
	ts := newServerAPI(t, store, srvOpenGates)

	status, raw := srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", srvCreateBody)
	if status != http.StatusCreated {
		t.Fatalf("POST = %d %s", status, raw)
	}
	view := srvJSON(t, raw)
	want := map[string]any{
		"id": "00000001-3333-4333-8333-333333333333", "name": "wiki", "url": "https://wiki.example.com/mcp", "enabled": true,
		"auth":           map[string]any{"type": "bearer", "hint": "Bearer …wxyz"},
		"acknowledgedAt": "2026-03-01T12:00:00.123Z", "lastDiscoveryAt": nil, "lastError": nil, "tools": []any{},
		"createdAt": "2026-03-01T12:00:00.123Z", "updatedAt": "2026-03-01T12:00:00.123Z", "status": "never_discovered",
		"maxCallsPerMinute": nil,
	}
	if !reflect.DeepEqual(view, want) {
		t.Errorf("POST view = %v\nwant %v", view, want)
	}
	id := view["id"].(string)

	status, raw = srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", `{"name": "docs", "url": "https://docs.example.com/", "auth": {"type": "none"}, "acknowledged": true}`)
	if status != http.StatusCreated {
		t.Fatalf("POST docs = %d %s", status, raw)
	}
	if auth := srvJSON(t, raw)["auth"]; !reflect.DeepEqual(auth, map[string]any{"type": "none"}) {
		t.Errorf("none auth view = %v, want no hint", auth)
	}

	status, raw = srvCall(t, ts, "admin", "GET", "/v1/mcp/servers", "")
	list, _ := srvJSON(t, raw)["servers"].([]any)
	if status != http.StatusOK || len(list) != 2 || list[0].(map[string]any)["name"] != "docs" {
		t.Errorf("GET list = %d %s", status, raw)
	}
	status, raw = srvCall(t, ts, "other", "GET", "/v1/mcp/servers", "")
	if status != http.StatusOK || string(raw) != "{\"servers\":[]}\n" {
		t.Errorf("GET list of another tenant = %d %s", status, raw)
	}

	status, raw = srvCall(t, ts, "admin", "GET", "/v1/mcp/servers/"+id, "")
	if status != http.StatusOK || srvJSON(t, raw)["name"] != "wiki" {
		t.Errorf("GET = %d %s", status, raw)
	}
	for _, tok := range []string{"other"} {
		status, raw = srvCall(t, ts, tok, "GET", "/v1/mcp/servers/"+id, "")
		if code, _ := srvErr(t, raw); status != http.StatusNotFound || code != "not_found" {
			t.Errorf("GET by another tenant = %d %s", status, raw)
		}
	}

	status, raw = srvCall(t, ts, "admin", "PATCH", "/v1/mcp/servers/"+id, `{"name": "wiki2", "enabled": false}`)
	if v := srvJSON(t, raw); status != http.StatusOK || v["name"] != "wiki2" || v["enabled"] != false {
		t.Errorf("PATCH = %d %s", status, raw)
	}
	status, raw = srvCall(t, ts, "admin", "PATCH", "/v1/mcp/servers/"+id, `{"url": "https://docs.example.com/mcp", "acknowledged": true}`)
	if code, _ := srvErr(t, raw); status != http.StatusUnprocessableEntity || code != "credential_required" {
		t.Errorf("PATCH host without auth = %d %s", status, raw)
	}
	status, raw = srvCall(t, ts, "admin", "PATCH", "/v1/mcp/servers/"+id, `{}`)
	if code, _ := srvErr(t, raw); status != http.StatusUnprocessableEntity || code != "validation_failed" {
		t.Errorf("PATCH {} = %d %s", status, raw)
	}

	// Every answer so far, and every audit event, is free of the secret.
	for _, tok := range []string{"admin"} {
		_, raw = srvCall(t, ts, tok, "GET", "/v1/mcp/servers", "")
		if strings.Contains(string(raw), "SUPERSECRET") {
			t.Errorf("GET list leaks the secret: %s", raw)
		}
	}
	if out := fmt.Sprintf("%+v", store.events); strings.Contains(out, "SUPERSECRET") {
		t.Errorf("audit leaks the secret: %s", out)
	}
	if strings.Contains(string(store.creds[id]), "SUPERSECRET") {
		t.Errorf("the credential is stored in clear")
	}

	status, raw = srvCall(t, ts, "admin", "DELETE", "/v1/mcp/servers/"+id, "")
	if status != http.StatusNoContent || len(raw) != 0 {
		t.Errorf("DELETE = %d %q", status, raw)
	}
	status, _ = srvCall(t, ts, "admin", "DELETE", "/v1/mcp/servers/"+id, "")
	if status != http.StatusNotFound {
		t.Errorf("DELETE again = %d", status)
	}
}

func TestServerRoutesRefusals(t *testing.T) {
	ts := newServerAPI(t, newSrvStore(), srvOpenGates)
	tests := []struct {
		name, token, method, path, body string
		status                          int
		code                            string
		fields                          []string
	}{
		{name: "no token", method: "GET", path: "/v1/mcp/servers", status: 401, code: "unauthenticated"},
		{name: "unknown token", token: "nope", method: "GET", path: "/v1/mcp/servers", status: 401, code: "unauthenticated"},
		{name: "repo token", token: "repo", method: "POST", path: "/v1/mcp/servers", body: srvCreateBody, status: 403, code: "forbidden"},
		{name: "repo token delete", token: "repo", method: "DELETE", path: "/v1/mcp/servers/00000001-3333-4333-8333-333333333333", status: 403, code: "forbidden"},
		{name: "command field", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "command": "npx", "args": ["evil"], "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "stdio field", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "stdio": true, "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "transport field", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "transport": "stdio", "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "unknown auth field", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "header", "name": "x-a", "value": "v", "command": "sh"}, "acknowledged": true}`},
		{name: "command in patch", token: "admin", method: "PATCH", path: "/v1/mcp/servers/00000001-3333-4333-8333-333333333333", status: 400, code: "bad_json",
			body: `{"command": "npx"}`},
		{name: "not json", token: "admin", method: "POST", path: "/v1/mcp/servers", body: `name=wiki`, status: 400, code: "bad_json"},
		{name: "two values", token: "admin", method: "POST", path: "/v1/mcp/servers", body: srvCreateBody + srvCreateBody, status: 400, code: "bad_json"},
		{name: "too large", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "bearer", "token": "` + strings.Repeat("a", limits.MaxRequestBody) + `"}, "acknowledged": true}`},
		{name: "missing fields", token: "admin", method: "POST", path: "/v1/mcp/servers", body: `{}`, status: 422, code: "validation_failed",
			fields: []string{"name", "url", "auth"}},
		{name: "bad auth type", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "validation_failed", fields: []string{"auth.type"},
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "oauth"}, "acknowledged": true}`},
		{name: "token too long", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "validation_failed", fields: []string{"auth.token"},
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "bearer", "token": "` + strings.Repeat("a", limits.MaxCredentialLen+1) + `"}, "acknowledged": true}`},
		{name: "url too long", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "validation_failed", fields: []string{"url"},
			body: `{"name": "wiki", "url": "https://wiki.example.com/` + strings.Repeat("a", limits.MaxURLLen) + `", "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "wrong type", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "none"}, "acknowledged": "yes"}`},
		{name: "wrong type hiding a command field", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 400, code: "bad_json",
			body: `{"name": 5, "command": "npx", "url": "https://wiki.example.com/", "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "domain field rules", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "validation_failed", fields: []string{"name", "url"},
			body: `{"name": "Wiki", "url": "https://user:` + srvSecret + `@wiki.example.com/", "auth": {"type": "none"}, "acknowledged": true}`},
		{name: "not acknowledged", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "acknowledgement_required",
			body: `{"name": "wiki", "url": "https://wiki.example.com/", "auth": {"type": "none"}}`},
		{name: "private host", token: "admin", method: "POST", path: "/v1/mcp/servers", status: 422, code: "endpoint_not_public",
			body: `{"name": "wiki", "url": "https://intra.example/mcp", "auth": {"type": "bearer", "token": "` + srvSecret + `"}, "acknowledged": true}`},
		{name: "unknown id", token: "admin", method: "GET", path: "/v1/mcp/servers/00000000-0000-4000-8000-000000000000", status: 404, code: "not_found"},
		{name: "malformed id", token: "admin", method: "GET", path: "/v1/mcp/servers/..%2f..%2fetc", status: 404, code: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, raw := srvCall(t, ts, tt.token, tt.method, tt.path, tt.body)
			code, fields := srvErr(t, raw)
			if status != tt.status || code != tt.code {
				t.Fatalf("%s %s = %d %s, want %d %s", tt.method, tt.path, status, raw, tt.status, tt.code)
			}
			var got []string
			for f := range fields {
				got = append(got, f)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.fields))
			if !slices.Equal(got, want) {
				t.Errorf("fields = %v, want %v", got, want)
			}
			for _, leak := range []string{"SUPERSECRET", "intra.example", "wiki.example.com", "10.0.0.5", "npx"} {
				if strings.Contains(string(raw), leak) {
					t.Errorf("error body %s contains %q", raw, leak)
				}
			}
		})
	}
}

func TestServerRoutesGates(t *testing.T) {
	store := newSrvStore()
	open := newServerAPI(t, store, srvOpenGates)
	status, raw := srvCall(t, open, "admin", "POST", "/v1/mcp/servers", srvCreateBody)
	if status != http.StatusCreated {
		t.Fatalf("POST = %d %s", status, raw)
	}
	id := srvJSON(t, raw)["id"].(string)

	for _, g := range []struct {
		name  string
		gates app.Gates
		code  string
	}{
		{"not signed off", app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}, "not_signed_off"},
		{"instance disabled", app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}, "instance_disabled"},
	} {
		t.Run(g.name, func(t *testing.T) {
			ts := newServerAPI(t, store, g.gates)
			for _, req := range []struct{ method, path, body string }{
				{"POST", "/v1/mcp/servers", strings.Replace(srvCreateBody, `"wiki"`, `"wiki3"`, 1)},
				{"PATCH", "/v1/mcp/servers/" + id, `{"enabled": false}`},
				// Closed gates answer before the body is read: an invalid,
				// a malformed or an empty body gets the same answer.
				{"POST", "/v1/mcp/servers", `{"name": "", "url": "http://x", "auth": {"type": "none"}, "acknowledged": true}`},
				{"POST", "/v1/mcp/servers", `{not json`},
				{"PATCH", "/v1/mcp/servers/" + id, ``},
			} {
				status, raw := srvCall(t, ts, "admin", req.method, req.path, req.body)
				if code, _ := srvErr(t, raw); status != http.StatusUnprocessableEntity || code != g.code {
					t.Errorf("%s = %d %s, want 422 %s", req.method, status, raw, g.code)
				}
			}
			if status, _ := srvCall(t, ts, "admin", "GET", "/v1/mcp/servers/"+id, ""); status != http.StatusOK {
				t.Errorf("GET under closed gates = %d", status)
			}
		})
	}
	closed := newServerAPI(t, store, app.Gates{})
	if status, raw := srvCall(t, closed, "admin", "DELETE", "/v1/mcp/servers/"+id, ""); status != http.StatusNoContent {
		t.Errorf("DELETE under closed gates = %d %s", status, raw)
	}
}

// TestServerRequestTagsMatchLimits keeps the validator tags, which cannot
// name constants, equal to package limits.
func TestServerRequestTagsMatchLimits(t *testing.T) {
	tests := []struct {
		typ   any
		field string
		max   int
	}{
		{createServerRequest{}, "Name", limits.MaxServerNameLen},
		{createServerRequest{}, "URL", limits.MaxURLLen},
		{patchServerRequest{}, "Name", limits.MaxServerNameLen},
		{patchServerRequest{}, "URL", limits.MaxURLLen},
		{serverAuthRequest{}, "Token", limits.MaxCredentialLen},
		{serverAuthRequest{}, "Value", limits.MaxCredentialLen},
		{serverAuthRequest{}, "Name", 64},
		{serverAuthRequest{}, "TokenURL", limits.MaxURLLen},
		{serverAuthRequest{}, "ClientID", server.MaxOAuthClientIDLen},
		{serverAuthRequest{}, "ClientSecret", limits.MaxCredentialLen},
		{serverAuthRequest{}, "Scopes", server.MaxOAuthScopes},
		{serverAuthRequest{}, "Scopes", server.MaxOAuthScopeLen},
	}
	for _, tt := range tests {
		f, _ := reflect.TypeOf(tt.typ).FieldByName(tt.field)
		if tag := f.Tag.Get("validate"); !strings.Contains(tag, "max="+strconv.Itoa(tt.max)) {
			t.Errorf("%T.%s validate %q, want max=%d", tt.typ, tt.field, tag, tt.max)
		}
	}
}

// testFindings reads the poisoning rules with a one-rule scanner.
var testFindings = registry.NewFindings(portfake.Scanner{})

func TestNewServerViewTools(t *testing.T) {
	at := time.Date(2026, 3, 2, 8, 30, 0, 0, time.FixedZone("CET", 3600))
	d, err := tool.NewDefinition("search", "server text", json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), json.RawMessage(`{"readOnlyHint":true}`))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tool.NewSnapshot("wiki", d, "Searches the wiki.", at)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := server.ParseName("wiki")
	u, _ := server.ParseURL("https://wiki.example.com/mcp")
	s, _ := server.NewServer("00000001-3333-4333-8333-333333333333", srvTenantA, name, u, server.NoCredential(), true, at)
	if err := s.ReplaceTools([]tool.Snapshot{snap}, at); err != nil {
		t.Fatal(err)
	}
	s.RecordDiscovery(at, "timeout")
	raw, _ := json.Marshal(NewServerView(s, testFindings, server.AllowedURLs{}))
	v := srvJSON(t, raw)
	if v["lastDiscoveryAt"] != "2026-03-02T07:30:00Z" || v["lastError"] != "timeout" {
		t.Errorf("view = %s", raw)
	}
	tools, _ := v["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools = %v", v["tools"])
	}
	got := tools[0].(map[string]any)
	keys := slices.Sorted(maps.Keys(got))
	if want := []string{"annotations", "approvedAt", "description", "hash", "inputSchema", "name", "serverDefinition", "state", "writeCapable"}; !slices.Equal(keys, want) {
		t.Errorf("tool keys = %v, want %v", keys, want)
	}
	if v["status"] != "unreachable" || got["state"] != "pinned" ||
		!reflect.DeepEqual(got["serverDefinition"], map[string]any{"description": "server text",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
			"annotations": map[string]any{"readOnlyHint": true}, "findings": []any{}}) {
		t.Errorf("status %v, state %v, serverDefinition %v", v["status"], got["state"], got["serverDefinition"])
	}
	if got["name"] != "search" || got["description"] != "Searches the wiki." || got["writeCapable"] != false ||
		got["hash"] != snap.Hash() || got["approvedAt"] != "2026-03-02T07:30:00Z" || got["inputSchema"] == nil ||
		!reflect.DeepEqual(got["annotations"], map[string]any{"readOnlyHint": true}) {
		t.Errorf("tool view = %v", got)
	}
}
