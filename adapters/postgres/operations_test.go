package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// review stores a repository and a queued review run in tenant.
func (f fixture) review(t *testing.T, tenant string) string {
	t.Helper()
	repo, run := newID(t), newID(t)
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Repositories().Insert(ctx, ports.Repository{ID: repo, Name: "acme/" + repo, Visibility: policy.VisibilityPrivate}); err != nil {
			return err
		}
		return tx.Reviews().Insert(ctx, ports.ReviewRun{ID: run, RepositoryID: repo, Title: "t", Diff: "d", CreatedAt: now})
	})
	return run
}

func TestSettingsRepo(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Settings().Get(ctx)
		if err != nil || got != settings.Default() {
			t.Errorf("Get = %+v, %v; want the defaults", got, err)
		}
		s, _ := settings.New(3650, true, 168)
		return tx.Settings().Put(ctx, s)
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Settings().Get(ctx)
		if err != nil || got.RetentionDays() != 3650 || !got.DebugPrompts() || got.PromptTTLHours() != 168 {
			t.Errorf("Get after Put = %+v, %v", got, err)
		}
		return nil
	})
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		if got, _ := tx.Settings().Get(ctx); got != settings.Default() {
			t.Errorf("tenant b sees %+v", got)
		}
		return nil
	})
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

func TestPromptLogRepo(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	ra, rb := f.review(t, a), f.review(t, b)
	at := func(h int) time.Time { return now.Add(time.Duration(h) * time.Hour) }
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		for i, exp := range []int{2, 1, 3} {
			if err := tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: ra, Step: "finder", Turn: i + 1,
				Sealed: []byte{byte(i)}, CreatedAt: now, ExpiresAt: at(exp)}); err != nil {
				return err
			}
		}
		// Another tenant's review is not found.
		if err := tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: rb, Step: "finder", Turn: 1, Sealed: []byte{9}, CreatedAt: now, ExpiresAt: at(1)}); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Insert for another tenant's review = %v, want ErrNotFound", err)
		}
		return nil
	})
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: rb, Step: "summary", Turn: 1, Sealed: []byte{7}, CreatedAt: now, ExpiresAt: at(1)})
	})
	turns := func(tenant, review string, asOf time.Time) string {
		var out []int
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			logs, err := tx.PromptLogs().List(ctx, review, asOf)
			for _, l := range logs {
				out = append(out, l.Turn)
			}
			return err
		})
		return fmt.Sprint(out)
	}
	if got := turns(a, ra, now); got != "[1 2 3]" {
		t.Errorf("List = %s, want [1 2 3] in write order", got)
	}
	if got := turns(a, ra, at(2)); got != "[3]" {
		t.Errorf("List at +2h = %s, want [3] (expired ones left out)", got)
	}
	if got := turns(a, rb, now); got != "[]" {
		t.Errorf("tenant a lists b's logs: %s", got)
	}
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		n, err := tx.PromptLogs().DeleteAll(ctx)
		if n != 1 {
			t.Errorf("DeleteAll in b = %d, want 1", n)
		}
		return err
	})
	if got := turns(a, ra, now); got != "[1 2 3]" {
		t.Errorf("b's DeleteAll touched a's logs: %s", got)
	}

	// Rotation pages through every tenant's logs and swaps only unchanged ones.
	rot := postgres.NewPromptLogRotator(f.db)
	var all []ports.SealedPromptLog
	for after := ""; ; {
		batch, err := rot.Batch(t.Context(), after, 2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, batch...)
		if len(batch) < 2 {
			break
		}
		after = batch[len(batch)-1].ID
	}
	if len(all) != 3 || all[0].ReviewID != ra {
		t.Fatalf("Batch pages = %+v", all)
	}
	if ok, err := rot.Replace(t.Context(), all[0].ID, []byte("not the stored one"), []byte("new")); ok || err != nil {
		t.Errorf("Replace with a stale old = %v, %v", ok, err)
	}
	if ok, err := rot.Replace(t.Context(), all[0].ID, all[0].Sealed, []byte("new")); !ok || err != nil {
		t.Errorf("Replace = %v, %v", ok, err)
	}
}

func TestRepositoryListAndPolicies(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	ids := map[string]string{}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		for _, name := range []string{"acme/web", "acme/api", "Acme/zeta", "acme/ops"} {
			ids[name] = newID(t)
			if err := tx.Repositories().Insert(ctx, ports.Repository{ID: ids[name], Name: name, Visibility: policy.VisibilityPrivate}); err != nil {
				return err
			}
		}
		s, _ := policy.NewMcpSection("off", nil, nil)
		return tx.Policies().PutRepository(ctx, ids["acme/ops"], s)
	})
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Repositories().Insert(ctx, ports.Repository{ID: newID(t), Name: "beta/api", Visibility: policy.VisibilityPublic})
	})
	var pages []string
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		for after := ""; ; {
			page, err := tx.Repositories().List(ctx, after, 3)
			if err != nil {
				return err
			}
			var names []string
			for _, r := range page {
				names = append(names, r.Name)
			}
			pages = append(pages, strings.Join(names, ","))
			if len(page) < 3 {
				break
			}
			after = page[len(page)-1].Name
		}
		got, err := tx.Policies().Repositories(ctx, []string{ids["acme/ops"], ids["acme/api"], "not-a-uuid"})
		if err != nil {
			return err
		}
		if len(got) != 1 || got[ids["acme/ops"]].Mode() != policy.ModeOff {
			t.Errorf("Policies().Repositories = %v, want only acme/ops (off)", got)
		}
		return nil
	})
	all := strings.Join(pages, "|")
	if strings.Count(all, ",")+strings.Count(all, "|")+1 != 4 || strings.Contains(all, "beta") {
		t.Errorf("pages %q: want the tenant's 4 repositories, each once, without tenant b's", pages)
	}
}
