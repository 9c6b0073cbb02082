package repositories_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports/portfake"
)

// TestRepositoriesUsingServer: the repositories whose effective policy is
// on and names the server, by name, over more than one page of
// repositories: their own section, or the default they inherit; not one
// whose policy is off, names only another server, or is public.
func TestRepositoriesUsingServer(t *testing.T) {
	const server, other = "51515151-0000-4000-8000-000000000001", "51515151-0000-4000-8000-000000000002"
	section := func(mode string, servers ...string) policy.McpSection {
		s, err := policy.NewMcpSection(mode, servers, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	repos := portfake.NewRepositories()
	def := section("on", server)
	pols := &portfake.Policies{Def: &def, Servers: map[string]bool{server: true, other: true}, Repos: map[string]policy.McpSection{}}
	var want []string
	for i := range repositories.MaxRepositoryPage + 30 {
		id := fmt.Sprintf("10000000-0000-4000-8000-%012d", i)
		name := fmt.Sprintf("acme/r%04d", i)
		v := policy.VisibilityPrivate
		switch i % 5 {
		case 0: // its own section, on with the server
			pols.Repos[id] = section("on", other, server)
			want = append(want, name)
		case 1: // inherits the default, which names it
			want = append(want, name)
		case 2:
			pols.Repos[id] = section("off", server)
		case 3:
			pols.Repos[id] = section("on", other)
		case 4:
			pols.Repos[id] = section("on", server)
			v = policy.VisibilityPublic
		}
		repos.ByID[id] = portfake.MustRepository(id, name, v)
	}
	tenants := &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{RepositoryRepo: repos, PolicyRepo: pols} }}
	h := repositories.NewRepositoriesUsingServerHandler(repositories.Deps{Tenants: tenants,
		Gates: app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}})
	got, err := h.Handle(context.Background(), admin(), repositories.RepositoriesUsingServer{ServerID: server})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Name())
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("using the server: %d repositories %v…, want %d %v…", len(names), names[:min(4, len(names))], len(want), want[:4])
	}
}
