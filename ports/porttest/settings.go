package porttest

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// SettingsRepo is the contract of [ports.SettingsRepo] (uses Tenants and
// Accounts). Two writers at once both commit, each change made on the
// other's (settingsTwoWriters); which lock waits for which is the
// adapter's own test.
func SettingsRepo(t *testing.T, open Open) {
	t.Run("a new tenant has the default settings; Put stores them for that tenant only", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		changed, err := settings.New(30, true, 168)
		if err != nil {
			t.Fatal(err)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Settings().Get(ctx)); got != settings.Default() {
				t.Errorf("settings of a new tenant = %+v, want the defaults %+v", got, settings.Default())
			}
			if err := tx.Settings().Put(ctx, changed); err != nil {
				return err
			}
			if got := must(tx.Settings().Get(ctx)); got != changed {
				t.Errorf("Get after Put = %+v, want %+v", got, changed)
			}
			if got := must(tx.Settings().GetForUpdate(ctx)); got != changed {
				t.Errorf("GetForUpdate after Put = %+v, want %+v", got, changed)
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Settings().GetForUpdate(ctx)); got != settings.Default() {
				t.Errorf("GetForUpdate of another tenant = %+v, want the defaults", got)
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Settings().Get(ctx)); got != changed {
				t.Errorf("Get in a later transaction = %+v, want %+v", got, changed)
			}
			return tx.Settings().Put(ctx, changed) // the same again
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Settings().Get(ctx)); got != settings.Default() {
				t.Errorf("another tenant's settings = %+v, want the defaults", got)
			}
			return nil
		})
	})

	t.Run("two writers at once both commit, neither change lost", func(t *testing.T) { settingsTwoWriters(t, open) })

	t.Run("Put refuses zero settings and keeps the stored ones", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Settings().Put(ctx, settings.Settings{}); err == nil {
				t.Error("Put(zero settings) succeeded")
			}
			if got := must(tx.Settings().Get(ctx)); got != settings.Default() {
				t.Errorf("after a refused Put: %+v", got)
			}
			return nil
		})
	})
}
