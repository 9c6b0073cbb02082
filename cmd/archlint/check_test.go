package main

import (
	"strings"
	"testing"
)

func TestCheckFindsEveryViolationInTheBadFixture(t *testing.T) {
	got, err := Check("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"adapters/mcp/client.go:11: refers to sdk.CommandTransport",
		"adapters/mcp/client.go:13: refers to sdk.StdioTransport",
		"adapters/mcp/client.go:15: refers to sdk.IOTransport",
		"adapters/mcp/client.go:17: refers to sdk.NewStdioServerTransport",
		"adapters/mcp/dot.go:5: refers to StdioTransport of a dot-imported go-sdk package",
		"adapters/store/store.go:4: adapter store imports example.com/bad/adapters/mcp: an adapter never imports another adapter",
		"adapters/store/store.go:5: imports example.com/bad/cmd/tool: nothing imports cmd",
		"app/records.go:5: declares Account, a record of the domain aggregate rules.Account",
		"app/review/review.go:5: app module review imports example.com/bad/app/registry: modules import the shared package app and ports, never another module",
		"app/review/review.go:6: app module review imports example.com/bad/app/registry/sub: modules import",
		"app/shared.go:3: the shared package app imports example.com/bad/app/review: the root is shared by every module and imports none",
		"app/usecase.go:4: app imports example.com/bad/adapters/mcp: use cases reach the outside through ports only",
		"app/usecase.go:5: app imports example.com/bad/cmd/tool: use cases reach the outside through ports only",
		"cmd/tool/peer.go:4: imports example.com/bad/adapters/mcpclient/oauthpeer: a test helper, only test files import it",
		"domain/rules/dns.go:3: domain imports net:",
		"domain/rules/rules.go:4: domain imports database/sql",
		"domain/rules/rules.go:5: domain imports net/http",
		"domain/rules/rules.go:8: domain imports example.com/bad/adapters/mcp",
		"domain/rules/rules.go:9: domain imports github.com/rs/zerolog",
		"domain/rules/rules.go:10: domain imports github.com/uptrace/bun",
		"domain/rules/rules.go:19: domain calls time.Now",
		"ports/ports.go:4: ports imports example.com/bad/adapters/mcp: ports depend on the domain only",
		"ports/ports.go:5: ports imports example.com/bad/app: ports depend on the domain only",
		"ports/records.go:4: declares RulesAccount, a record of the domain aggregate rules.Account",
	}
	if len(got) != len(want) {
		t.Errorf("Check(bad) found %d violations, want %d:\n%v", len(got), len(want), got)
	}
	for i := range min(len(got), len(want)) {
		if !strings.HasPrefix(got[i].String(), want[i]) {
			t.Errorf("violation %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

func TestCheckPassesTheGoodFixture(t *testing.T) {
	got, err := Check("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("Check(good) = %v, want no violations", got)
	}
}

func TestCheckPassesThisRepository(t *testing.T) {
	got, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Errorf("repository violation: %s", v)
	}
}
