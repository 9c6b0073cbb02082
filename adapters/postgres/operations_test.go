package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// The settings port's semantics are the contract suite's
// (porttest.SettingsRepo); here, what the tenant role may write below it.
func TestTenantRoleWritesOnlyItsOwnSettings(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	// The tenant role may change only the settings columns of its own row.
	err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE tenants SET name = 'renamed' WHERE id = ?", a)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("renaming the tenant as the tenant role = %v, want permission denied", err)
	}
	var n int64
	err = f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE tenants SET retention_days = 1 WHERE id = ?", b)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil || n != 0 {
		t.Errorf("tenant a updating tenant b's settings changed %d rows, %v", n, err)
	}
}

// A writer holding the settings (Get, FOR SHARE) makes a Put wait: a
// prompt log cannot be written after the setting was turned off.
func TestSettingsGetHoldsAShareLock(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	read := make(chan struct{})
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			if _, err := tx.Settings().Get(ctx); err != nil {
				return err
			}
			close(read)
			time.Sleep(300 * time.Millisecond)
			note("writer done")
			return nil
		})
	})
	wg.Go(func() {
		<-read
		_ = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			err := tx.Settings().Put(ctx, settings.Default())
			note("put")
			return err
		})
	})
	wg.Wait()
	if fmt.Sprint(order) != "[writer done put]" {
		t.Errorf("order %v: the Put did not wait for the reader", order)
	}
}
