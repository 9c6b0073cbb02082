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

func TestListRepositoriesAnswersMcpActiveLikeThePolicy(t *testing.T) {
	const (
		rOn, rPublic, rInherit, rGone, rOff = "10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-000000000002",
			"10000000-0000-4000-8000-000000000003", "10000000-0000-4000-8000-000000000004", "10000000-0000-4000-8000-000000000005"
		server, deleted = "51515151-0000-4000-8000-000000000001", "51515151-0000-4000-8000-000000000002"
	)
	section := func(mode string, servers ...string) policy.McpSection {
		s, err := policy.NewMcpSection(mode, servers, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	repo := portfake.MustRepository
	repos := portfake.NewRepositories(
		repo(rOn, "a/on", policy.VisibilityPrivate), repo(rPublic, "b/public", policy.VisibilityPublic),
		repo(rInherit, "c/inherit", policy.VisibilityInternal), repo(rGone, "d/gone", policy.VisibilityPrivate),
		repo(rOff, "e/off", policy.VisibilityPrivate),
	)
	def := section("on", server)
	pols := &portfake.Policies{Def: &def, Servers: map[string]bool{server: true}, Repos: map[string]policy.McpSection{
		rOn: section("on", server), rPublic: section("on", server), rGone: section("on", deleted), rOff: section("off"),
	}}
	tenants := &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{RepositoryRepo: repos, PolicyRepo: pols} }}
	open := app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}
	list := func(g app.Gates, q repositories.ListRepositories) string {
		items, err := repositories.NewListRepositoriesHandler(repositories.Deps{Tenants: tenants, Gates: g}).Handle(context.Background(), admin(), q)
		if err != nil {
			t.Fatalf("List(%+v) = %v", q, err)
		}
		var out []string
		for _, it := range items {
			out = append(out, fmt.Sprintf("%s=%v", it.Name(), it.McpActive))
		}
		return strings.Join(out, " ")
	}
	if got, want := list(open, repositories.ListRepositories{Limit: 10}), "a/on=true b/public=false c/inherit=true d/gone=false e/off=false"; got != want {
		t.Errorf("List = %s, want %s", got, want)
	}
	if got, want := list(open, repositories.ListRepositories{Limit: 2, After: "b/public"}), "c/inherit=true d/gone=false"; got != want {
		t.Errorf("page after b/public = %s, want %s", got, want)
	}
	asked := len(pols.Asked)
	closed := app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}
	if got, want := list(closed, repositories.ListRepositories{Limit: 10}), "a/on=false b/public=false c/inherit=false d/gone=false e/off=false"; got != want {
		t.Errorf("instance disabled: %s, want %s", got, want)
	}
	if len(pols.Asked) != asked {
		t.Error("closed gates still read the policies")
	}
	for _, q := range []repositories.ListRepositories{{Limit: 0}, {Limit: 201}, {Limit: 5, After: strings.Repeat("x", 201)}, {Limit: 5, After: "\x00"}, {Limit: 5, After: "acme/\x00x"}, {Limit: 5, After: "\xff"}} {
		if _, err := repositories.NewListRepositoriesHandler(repositories.Deps{Tenants: tenants, Gates: open}).Handle(context.Background(), admin(), q); app.AsError(err).Code != app.CodeValidationFailed {
			t.Errorf("List(limit %d, after %d chars) = %v, want validation_failed", q.Limit, len(q.After), err)
		}
	}
}
