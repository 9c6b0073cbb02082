package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// TestTakeCallAcrossReplicas: two replicas, each with its own pool on
// one database, take calls of one server at once; exactly the limit
// are granted, however the takes interleave.
func TestTakeCallAcrossReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	replicas := []*postgres.Tenants{postgres.NewTenants(a), postgres.NewTenants(b)}
	tenant, err := postgres.NewAccounts(a).CreateTenant(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, tenant, "wiki", server.NoCredential())
	if err := replicas[0].InTenant(t.Context(), tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Servers().Insert(ctx, srv, nil, 20)
	}); err != nil {
		t.Fatal(err)
	}
	const limit, takers = 10, 40
	var (
		mu      sync.Mutex
		granted = map[int]int{}
		wg      sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range takers {
		wg.Go(func() {
			<-start
			replica := i % 2
			err := replicas[replica].InTenant(t.Context(), tenant, func(ctx context.Context, tx ports.TenantTx) error {
				ok, err := tx.Servers().TakeCall(ctx, srv.ID(), limit, time.Hour)
				if ok {
					mu.Lock()
					granted[replica]++
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				t.Errorf("TakeCall on replica %d: %v", replica, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := granted[0] + granted[1]; n != limit {
		t.Errorf("granted %d (%d and %d on the two replicas) of %d takes, want %d", n, granted[0], granted[1], takers, limit)
	}
}

// TestTakeCallDropsEarlierWindows: a take deletes its server's counts of
// earlier windows, never another server's; deleting a server deletes
// its counts.
func TestTakeCallDropsEarlierWindows(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	wiki, docs := newServer(t, tenant, "wiki", server.NoCredential()), newServer(t, tenant, "docs", server.NoCredential())
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Servers().Insert(ctx, wiki, nil, 20); err != nil {
			return err
		}
		return tx.Servers().Insert(ctx, docs, nil, 20)
	})
	take := func(id string, window time.Duration) {
		t.Helper()
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			ok, err := tx.Servers().TakeCall(ctx, id, 100, window)
			if !ok && err == nil {
				t.Errorf("take of %s refused", id)
			}
			return err
		})
	}
	su := pgtest.Superuser(t, f.db) // past row-level security
	rows := func(id string) int {
		t.Helper()
		var n int
		if err := su.Bun().NewRaw("SELECT count(*) FROM mcp_call_minutes WHERE server_id = ?", id).Scan(t.Context(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const window = 100 * time.Millisecond
	take(docs.ID(), window)
	for range 3 {
		take(wiki.ID(), window)
		time.Sleep(window + 20*time.Millisecond)
	}
	take(wiki.ID(), window)
	if n := rows(wiki.ID()); n != 1 {
		t.Errorf("wiki holds %d windows, want the current one only", n)
	}
	if n := rows(docs.ID()); n != 1 {
		t.Errorf("docs holds %d windows, want its one: wiki's take deleted another server's", n)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Servers().Delete(ctx, wiki.ID()) })
	if n := rows(wiki.ID()); n != 0 {
		t.Errorf("a deleted server keeps %d windows", n)
	}
}
