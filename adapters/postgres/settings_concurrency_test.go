package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// TestSettingsGetForUpdateSerialisesChanges: 50 concurrent
// read-then-Put transactions of one tenant (what PUT /v1/tenant/settings
// does) all commit; none fails with "deadlock detected", which two share
// locks followed by two UPDATEs give. Each change reads what the one
// before it stored.
func TestSettingsGetForUpdateSerialisesChanges(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	const writers = 50
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		start = make(chan struct{})
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			next, err := settings.New(i+1, false, 24)
			if err != nil {
				t.Error(err)
				return
			}
			err = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
				if _, err := tx.Settings().GetForUpdate(ctx); err != nil {
					return err
				}
				time.Sleep(time.Millisecond) // widen the window between the read and the write
				return tx.Settings().Put(ctx, next)
			})
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d concurrent changes failed, the first: %v", len(errs), writers, errs[0])
	}
}

// TestSettingsGetForUpdateMakesAChangeWait: while one transaction holds
// the settings for a change, another's GetForUpdate waits, and then reads
// what the first stored.
func TestSettingsGetForUpdateMakesAChangeWait(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	changed, err := settings.New(7, false, 24)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		order []string
		seen  settings.Settings
	)
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	wg.Go(func() {
		_ = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			if _, err := tx.Settings().GetForUpdate(ctx); err != nil {
				return err
			}
			close(held)
			time.Sleep(300 * time.Millisecond)
			note("first done")
			return tx.Settings().Put(ctx, changed)
		})
	})
	wg.Go(func() {
		<-held
		_ = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			var err error
			seen, err = tx.Settings().GetForUpdate(ctx)
			note("second read")
			return err
		})
	})
	wg.Wait()
	if fmt.Sprint(order) != "[first done second read]" || seen != changed {
		t.Errorf("order %v, second read %+v: want it to wait and read %+v", order, seen, changed)
	}
}
