package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/domain/server"
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

// TestRecheckCandidatesCarryTheListingsHint: RecordListTTL keeps a
// server's cache hint, which its candidate carries; 0 removes it.
func TestRecheckCandidatesCarryTheListingsHint(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	tenant := f.tenant(t, "a")
	srv := newServer(t, tenant, "wiki", server.NoCredential())
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Servers().Insert(ctx, srv, nil, 20) })
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET tools = '[{"name":"search"}]' WHERE id = ?`, srv.ID())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	candidates := postgres.NewRecheckCandidates(f.db)
	for _, ttl := range []time.Duration{5 * time.Minute, 1500 * time.Millisecond, 48 * time.Hour, 0} {
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().RecordListTTL(ctx, srv.ID(), ttl)
		})
		got, err := candidates.RecheckCandidates(ctx)
		want := min(ttl, 24*time.Hour)
		if err != nil || len(got) != 1 || got[0].ListTTL != want {
			t.Errorf("after RecordListTTL(%v): %+v, %v; want the hint %v", ttl, got, err, want)
		}
	}
	if err := f.try(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Servers().RecordListTTL(ctx, "not-a-uuid", time.Minute)
	}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("RecordListTTL of a non-UUID = %v, want not found", err)
	}
}
