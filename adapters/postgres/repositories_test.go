package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// insertRepository stores a repository built by repository.New.
func insertRepository(ctx context.Context, tx ports.TenantTx, id, name string, v policy.Visibility) error {
	r, err := repository.New(id, name, v)
	if err != nil {
		return err
	}
	return tx.Repositories().Insert(ctx, r)
}

// TestACorruptRepositoryRowIsAnError: a row whose name breaks the
// repository's rule (written past the application, here by the superuser)
// loads as an error from Get, List and Update, never as a repository, and
// not as not found; Update writes nothing. The visibility has a CHECK of
// its own.
func TestACorruptRepositoryRowIsAnError(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	id := newID(t)
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return insertRepository(ctx, tx, id, "acme/api", policy.VisibilityPrivate)
	})
	su := pgtest.Superuser(t, f.db)
	for _, name := range []string{
		"",
		" acme/api",
		"acme/\x01api",
		"acme/\x1b[31mapi",
		"acme/\u202eipa",
		"acme/a\u200bpi",
		"acme/cafe\u0301", // not NFC: New stores "acme/café"
		"acme\uff0fapi",
		"acme/\u0430pi",
		strings.Repeat("a", repository.MaxNameLen+1),
	} {
		if _, err := su.Bun().ExecContext(t.Context(), "UPDATE repositories SET name = ? WHERE id = ?", name, id); err != nil {
			t.Fatal(err)
		}
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, id)
			corrupt(t, "Get", name, got, err)
			list, err := tx.Repositories().List(ctx, "", 10)
			if err == nil || errors.Is(err, ports.ErrNotFound) || list != nil {
				t.Errorf("List with the name %q = %v, %v; want an error", name, list, err)
			}
			called := false
			got, err = tx.Repositories().Update(ctx, id, func(r *repository.Repository) error {
				called = true
				return r.ChangeVisibility(policy.VisibilityPublic)
			})
			corrupt(t, "Update", name, got, err)
			if called {
				t.Errorf("Update called fn with the name %q", name)
			}
			return nil
		})
	}
	var visibility string
	if err := su.Bun().NewRaw("SELECT visibility FROM repositories WHERE id = ?", id).Scan(t.Context(), &visibility); err != nil || visibility != "private" {
		t.Errorf("visibility after the refused updates = %q, %v; want private", visibility, err)
	}
	for _, v := range []string{"secret", "PUBLIC", ""} {
		if _, err := su.Bun().ExecContext(t.Context(), "UPDATE repositories SET visibility = ? WHERE id = ?", v, id); err == nil {
			t.Errorf("the database stored the visibility %q", v)
		}
	}
}

func corrupt(t *testing.T, what, name string, got *repository.Repository, err error) {
	t.Helper()
	if got != nil || err == nil || errors.Is(err, ports.ErrNotFound) {
		t.Errorf("%s with the name %q = %+v, %v; want an error (not not found)", what, name, got, err)
	}
	if err != nil && name != "" && strings.Contains(err.Error(), name) {
		t.Errorf("%s: the error %q repeats the stored name", what, err)
	}
}
