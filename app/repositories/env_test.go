package repositories_test

import (
	"context"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
	"github.com/google/uuid"
)

// restEnv is the world of the REST use-case tests: one tenant with a
// private, an internal and a public repository and two servers; another
// tenant with one server of its own.
type restEnv struct {
	tenants  *portfake.Tenants
	clock    *portfake.Clock
	p        ports.Principal
	other    ports.Principal
	repos    map[string]*portfake.Repositories
	policies map[string]*portfake.Policies
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
		clock:    &portfake.Clock{At: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
		p:        ports.Principal{TokenID: "tok-1", TenantID: tenantA, Permissions: []string{app.PermTenantManage, app.PermRepoManage}},
		other:    ports.Principal{TokenID: "tok-2", TenantID: tenantB, Permissions: []string{app.PermTenantManage, app.PermRepoManage}},
		repos:    map[string]*portfake.Repositories{},
		policies: map[string]*portfake.Policies{},
	}
	seed := map[string]struct {
		repos   []*repository.Repository
		servers []string
	}{
		tenantA: {
			repos: []*repository.Repository{
				portfake.MustRepository(repoPrivate, "acme/api", policy.VisibilityPrivate),
				portfake.MustRepository(repoIntern, "acme/tools", policy.VisibilityInternal),
				portfake.MustRepository(repoPublic, "acme/site", policy.VisibilityPublic),
			},
			servers: []string{serverA1, serverA2},
		},
		tenantB: {servers: []string{serverB1}},
	}
	e.tenants = &portfake.Tenants{NewTx: func(tenantID string) *portfake.Tx {
		r := portfake.NewRepositories(seed[tenantID].repos...)
		pol := &portfake.Policies{Repos: map[string]policy.McpSection{}, Servers: map[string]bool{}}
		for _, s := range seed[tenantID].servers {
			pol.Servers[s] = true
		}
		e.repos[tenantID] = r
		e.policies[tenantID] = pol
		return &portfake.Tx{ServerRepo: nil, RepositoryRepo: r, PolicyRepo: pol}
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
	tx, ok := e.tenants.Txs[tenantID]
	if !ok {
		return nil
	}
	return tx.AuditLog.Events
}

var openGates = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}

func intPtr(n int) *int { return &n }

// restCode is the contract code of err ("" for nil).
func restCode(err error) app.Code {
	if err == nil {
		return ""
	}
	return app.AsError(err).Code
}

// admin is a tenant:manage principal of tenantA.
func admin() ports.Principal {
	return ports.Principal{TokenID: "t1", TenantID: tenantA, Permissions: []string{app.PermTenantManage}}
}

// deps are the module's ports on the environment's tenants and clock.
func (e *restEnv) deps(g app.Gates) repositories.Deps {
	return repositories.Deps{Tenants: e.tenants, Clock: e.clock, NewID: uuid.NewString, Gates: g}
}
