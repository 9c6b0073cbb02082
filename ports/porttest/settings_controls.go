package porttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// settingsTwoWriters: two transactions of one tenant change the settings
// at once, each reading them with GetForUpdate and storing a change of
// what it read (what PUT /v1/tenant/settings does). Both commit, and
// the second change is made on what the first stored: no lost update,
// no deadlock (two share locks followed by two UPDATEs deadlock in
// PostgreSQL, adapters/postgres/settings.go). The 50 writers of
// TestSettingsGetForUpdateSerialisesChanges and of the signed-off
// TestConcurrentWritersOnEveryWriteRoute are the adapter's and the
// binary's; this pair is the port's, for every implementation.
func settingsTwoWriters(t *testing.T, open Open) {
	h := open(t)
	tenant := h.tenant(t)
	initial := must(settings.New(30, false, 24))
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Settings().Put(ctx, initial)
	})
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, 2)
	)
	for i, add := range []int{1, 2} {
		wg.Go(func() {
			<-start
			errs[i] = h.Tenants.InTenant(t.Context(), tenant, func(ctx context.Context, tx ports.TenantTx) error {
				cur, err := tx.Settings().GetForUpdate(ctx)
				if err != nil {
					return err
				}
				// Both writers are inside their read before either writes,
				// unless the read of one waits for the other.
				time.Sleep(50 * time.Millisecond)
				next, err := settings.New(cur.RetentionDays()+add, !cur.DebugPrompts(), cur.PromptTTLHours())
				if err != nil {
					return err
				}
				return tx.Settings().Put(ctx, next)
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d of 2: %v", i+1, err)
		}
	}
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		if got := must(tx.Settings().Get(ctx)); got.RetentionDays() != 33 || got.DebugPrompts() != initial.DebugPrompts() || got.PromptTTLHours() != 24 {
			t.Errorf("after two writers: %+v, want retention 33 (30 + 1 + 2), debug prompts flipped twice, TTL 24", got)
		}
		return nil
	})
}
