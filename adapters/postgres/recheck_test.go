package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/ports"
)

// TestRecheckCandidates: every tenant's enabled servers with a pinned
// tool, with their last discovery, and no other server.
func TestRecheckCandidates(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	at := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	want := map[string]ports.RecheckCandidate{}
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		insert := func(tenant, name string, enabled bool, tools string, last any) (string, error) {
			var id string
			err := tx.NewRaw(`INSERT INTO mcp_servers (tenant_id, name, url, enabled, tools, last_discovery_at)
				VALUES (?, ?, 'https://wiki.example.com/mcp', ?, ?::jsonb, ?) RETURNING id`, tenant, name, enabled, tools, last).Scan(ctx, &id)
			return id, err
		}
		for _, s := range []struct {
			tenant, name string
			enabled      bool
			tools        string
			last         any
			due          bool
		}{
			{a, "pinned", true, `[{"name":"search"}]`, nil, true},
			{a, "none", true, `[]`, at, false},
			{a, "off", false, `[{"name":"search"}]`, at, false},
			{b, "pinned", true, `[{"name":"search"},{"name":"fetch"}]`, at, true},
		} {
			id, err := insert(s.tenant, s.name, s.enabled, s.tools, s.last)
			if err != nil {
				return err
			}
			if s.due {
				c := ports.RecheckCandidate{TenantID: s.tenant, ServerID: id}
				if s.last != nil {
					c.LastDiscoveryAt = at
				}
				want[id] = c
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := postgres.NewRecheckCandidates(f.db).RecheckCandidates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("candidates %+v, want %+v", got, want)
	}
	for i, c := range got {
		w := want[c.ServerID]
		if c.TenantID != w.TenantID || !c.LastDiscoveryAt.Equal(w.LastDiscoveryAt) {
			t.Errorf("candidate %+v, want %+v", c, w)
		}
		if i > 0 && got[i-1].TenantID > c.TenantID {
			t.Errorf("candidates not ordered by tenant: %+v", got)
		}
	}
}
