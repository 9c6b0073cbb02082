package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// fakeRepos is an in-memory ports.RepositoryRepo of one tenant.
type fakeRepos struct{ byID map[string]ports.Repository }

func (f *fakeRepos) Insert(_ context.Context, r ports.Repository) error {
	for _, have := range f.byID {
		if have.Name == r.Name {
			return ports.ErrConflict
		}
	}
	f.byID[r.ID] = r
	return nil
}

func (f *fakeRepos) Get(_ context.Context, id string) (ports.Repository, error) {
	r, ok := f.byID[id]
	if !ok {
		return ports.Repository{}, ports.ErrNotFound
	}
	return r, nil
}

func (f *fakeRepos) SetVisibility(_ context.Context, id string, v policy.Visibility) (ports.Repository, error) {
	r, ok := f.byID[id]
	if !ok {
		return ports.Repository{}, ports.ErrNotFound
	}
	r.Visibility = v
	f.byID[id] = r
	return r, nil
}

func (f *fakeRepos) List(_ context.Context, after string, limit int) ([]ports.Repository, error) {
	var out []ports.Repository
	for _, r := range f.byID {
		if r.Name > after {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b ports.Repository) int { return strings.Compare(a.Name, b.Name) })
	return out[:min(limit, len(out))], nil
}

// fakePolicies is an in-memory ports.PolicyRepo of one tenant; servers
// are the ids of the tenant's servers.
type fakePolicies struct {
	def     *policy.McpSection
	repos   map[string]policy.McpSection
	servers map[string]bool
	asked   [][]string
}

func (f *fakePolicies) Default(context.Context) (*policy.McpSection, error) { return f.def, nil }

func (f *fakePolicies) PutDefault(_ context.Context, s policy.McpSection) error {
	f.def = &s
	return nil
}

func (f *fakePolicies) Repository(_ context.Context, id string) (policy.McpSection, bool, error) {
	s, ok := f.repos[id]
	return s, ok, nil
}

func (f *fakePolicies) PutRepository(_ context.Context, id string, s policy.McpSection) error {
	f.repos[id] = s
	return nil
}

func (f *fakePolicies) Repositories(_ context.Context, ids []string) (map[string]policy.McpSection, error) {
	out := map[string]policy.McpSection{}
	for _, id := range ids {
		if s, ok := f.repos[id]; ok {
			out[id] = s
		}
	}
	return out, nil
}

func (f *fakePolicies) ServersExist(_ context.Context, ids []string) (map[string]bool, error) {
	f.asked = append(f.asked, ids)
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = f.servers[id]
	}
	return out, nil
}

// fakeAccounts is an in-memory ports.Accounts. It keeps what CreateToken
// received, so tests can check that no plaintext token reaches it.
type fakeAccounts struct {
	tenants map[string]string
	tokens  map[string]ports.Principal // key: string(hash)
	hashes  [][]byte
	nextID  int
}

func newFakeAccounts() *fakeAccounts {
	return &fakeAccounts{tenants: map[string]string{}, tokens: map[string]ports.Principal{}}
}

func (f *fakeAccounts) CreateTenant(_ context.Context, name string) (string, error) {
	f.nextID++
	id := uuidN(f.nextID)
	f.tenants[id] = name
	return id, nil
}

func (f *fakeAccounts) CreateToken(_ context.Context, tenantID string, hash []byte, perms []string) (string, error) {
	if _, ok := f.tenants[tenantID]; !ok {
		return "", ports.ErrNotFound
	}
	f.nextID++
	id := uuidN(f.nextID)
	f.hashes = append(f.hashes, append([]byte{}, hash...))
	f.tokens[string(hash)] = ports.Principal{TokenID: id, TenantID: tenantID, Permissions: perms}
	return id, nil
}

func (f *fakeAccounts) LookupToken(_ context.Context, hash []byte) (ports.Principal, error) {
	p, ok := f.tokens[string(hash)]
	if !ok {
		return ports.Principal{}, ports.ErrNotFound
	}
	return p, nil
}

// uuidN is a deterministic canonical UUID for test ids.
func uuidN(n int) string {
	const tmpl = "00000000-0000-4000-8000-000000000000"
	s := []byte(tmpl)
	d := []byte(itoa(n))
	copy(s[len(s)-len(d):], d)
	return string(s)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// restEnv is the world of the REST use-case tests: one tenant with a
// private, an internal and a public repository and two servers; another
// tenant with one server of its own.
type restEnv struct {
	tenants  *fakeTenants
	clock    *fixedClock
	p        ports.Principal
	other    ports.Principal
	repos    map[string]*fakeRepos
	policies map[string]*fakePolicies
}

const (
	tenantA     = "aaaaaaaa-0000-4000-8000-000000000001"
	tenantB     = "bbbbbbbb-0000-4000-8000-000000000002"
	repoPrivate = "11111111-1111-4111-8111-111111111111"
	repoIntern  = "22222222-2222-4222-8222-222222222222"
	repoPublic  = "33333333-3333-4333-8333-333333333333"
	serverA1    = "a1a1a1a1-0000-4000-8000-000000000001"
	serverA2    = "a2a2a2a2-0000-4000-8000-000000000002"
	serverB1    = "b1b1b1b1-0000-4000-8000-000000000001"
)

func newRestEnv(t *testing.T) *restEnv {
	t.Helper()
	e := &restEnv{
		clock:    &fixedClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
		p:        ports.Principal{TokenID: "tok-1", TenantID: tenantA, Permissions: []string{app.PermTenantManage, app.PermRepoManage}},
		other:    ports.Principal{TokenID: "tok-2", TenantID: tenantB, Permissions: []string{app.PermTenantManage, app.PermRepoManage}},
		repos:    map[string]*fakeRepos{},
		policies: map[string]*fakePolicies{},
	}
	seed := map[string]struct {
		repos   []ports.Repository
		servers []string
	}{
		tenantA: {
			repos: []ports.Repository{
				{ID: repoPrivate, Name: "acme/api", Visibility: policy.VisibilityPrivate},
				{ID: repoIntern, Name: "acme/tools", Visibility: policy.VisibilityInternal},
				{ID: repoPublic, Name: "acme/site", Visibility: policy.VisibilityPublic},
			},
			servers: []string{serverA1, serverA2},
		},
		tenantB: {servers: []string{serverB1}},
	}
	e.tenants = &fakeTenants{newTx: func(tenantID string) *fakeTx {
		r := &fakeRepos{byID: map[string]ports.Repository{}}
		pol := &fakePolicies{repos: map[string]policy.McpSection{}, servers: map[string]bool{}}
		for _, repo := range seed[tenantID].repos {
			r.byID[repo.ID] = repo
		}
		for _, s := range seed[tenantID].servers {
			pol.servers[s] = true
		}
		e.repos[tenantID] = r
		e.policies[tenantID] = pol
		return &fakeTx{servers: nil, repos: r, policies: pol}
	}}
	// Open both tenants now, so tests can look at their stores even when
	// a use case refused before its transaction.
	for _, id := range []string{tenantA, tenantB} {
		_ = e.tenants.InTenant(context.Background(), id, func(context.Context, ports.TenantTx) error { return nil })
	}
	return e
}

// audit returns the audit events of a tenant.
func (e *restEnv) audit(tenantID string) []ports.AuditEvent {
	tx, ok := e.tenants.txs[tenantID]
	if !ok {
		return nil
	}
	return tx.audit.events
}

var openGates = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}

func intPtr(n int) *int { return &n }
