package postgres_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// cpuTime is the process's CPU time (user and system), which is what the
// load test reports per request for the API process; wall time is mostly
// PostgreSQL's and the network's.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServerList is the store side of GET /v1/mcp/servers (20
// servers): the tenant transaction (BEGIN with role and tenant, the
// query, COMMIT: three round trips) against the read scope (one).
// cpu-ns/op is the benchmark process's CPU time per list.
func BenchmarkServerList(b *testing.B) {
	db := pgtest.New(b)
	tenants := postgres.NewTenants(db)
	accounts := postgres.NewAccounts(db)
	tenant, err := accounts.CreateTenant(b.Context(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	err = tenants.InTenant(b.Context(), tenant, func(ctx context.Context, tx ports.TenantTx) error {
		for i := range 20 {
			if err := tx.Servers().Insert(ctx, newServer(b, tenant, fmt.Sprintf("s%02d", i), server.NoCredential()), nil, 20); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	list := func(ctx context.Context, tx ports.TenantTx) error {
		s, err := tx.Servers().List(ctx)
		if err == nil && len(s) != 20 {
			err = fmt.Errorf("%d servers, want 20", len(s))
		}
		return err
	}
	for _, m := range []struct {
		name string
		run  func(context.Context, string, func(context.Context, ports.TenantTx) error) error
	}{{"transaction", tenants.InTenant}, {"read-scope", tenants.ReadInTenant}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				if err := m.run(b.Context(), tenant, list); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
