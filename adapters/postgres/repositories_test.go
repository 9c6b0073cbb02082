package postgres_test

import (
	"context"
	"errors"
	"fmt"
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

// TestACorruptRepositoryRowIsAnError: a row whose name is not safe to
// show (written past the application, here by the superuser) loads as an
// error from Get, List and Update, never as a repository, and not as not
// found; Update writes nothing. A NUL or invalid UTF-8 cannot even be
// stored (text in a UTF8 database). The visibility has a CHECK of its
// own.
func TestACorruptRepositoryRowIsAnError(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	id := newID(t)
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return insertRepository(ctx, tx, id, "acme/api", policy.VisibilityPrivate)
	})
	su := pgtest.Superuser(t, f.db)
	// Sent as parameters, byte for byte (bun's literals would replace an
	// invalid byte by U+FFFD before PostgreSQL sees it).
	for _, name := range []string{"acme/\x00api", "acme/\xff", "acme\xc0\xafapi"} {
		if _, err := su.Pool().Exec(t.Context(), "UPDATE repositories SET name = $1 WHERE id = $2", name, id); err == nil {
			t.Errorf("the database stored the name %q", name)
		}
	}
	if _, err := su.Pool().Exec(t.Context(), "UPDATE repositories SET name = $1 WHERE id = $2", "acme/api", id); err != nil {
		t.Fatalf("the same update of a good name: %v", err)
	}
	for _, name := range []string{
		"",
		"acme/\x01api",
		"acme/\x1b[31mapi",
		"acme/a\npi",
		"acme/a\u0085pi",
		"acme/\u202eipa",
		"acme/\u2067api",
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

// TestOlderRepositoryNamesLoad: names stored before the name rule, which
// New refuses or stores otherwise today, load as stored from Get, List
// and Update, among other repositories, so one of them never fails the
// list; Update changes the visibility and keeps the name.
func TestOlderRepositoryNamesLoad(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	su := pgtest.Superuser(t, f.db)
	older := []string{
		" acme/api",
		"acme/a\u200bpi",
		"acme/cafe\u0301", // not NFC: New stores "acme/café"
		"acme\uff0fapi",
		"acme/\u0430pi",
	}
	ids := map[string]string{}
	for i, name := range older {
		id := newID(t)
		ids[name] = id
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return insertRepository(ctx, tx, id, fmt.Sprintf("placeholder-%d", i), policy.VisibilityPrivate)
		})
		if _, err := su.Bun().ExecContext(t.Context(), "UPDATE repositories SET name = ? WHERE id = ?", name, id); err != nil {
			t.Fatal(err)
		}
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return insertRepository(ctx, tx, newID(t), "acme/web", policy.VisibilityPrivate)
	})
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		list, err := tx.Repositories().List(ctx, "", 50)
		if err != nil || len(list) != len(older)+1 {
			t.Fatalf("List = %d repositories, %v; want %d", len(list), err, len(older)+1)
		}
		for _, name := range older {
			got, err := tx.Repositories().Get(ctx, ids[name])
			if err != nil || got.Name() != name {
				t.Errorf("Get of %q = %+v, %v; want it as stored", name, got, err)
			}
			got, err = tx.Repositories().Update(ctx, ids[name], func(r *repository.Repository) error {
				return r.ChangeVisibility(policy.VisibilityPublic)
			})
			if err != nil || got.Name() != name || got.Visibility() != policy.VisibilityPublic {
				t.Errorf("Update of %q = %+v, %v", name, got, err)
			}
		}
		return nil
	})
	for _, name := range older {
		var stored string
		if err := su.Bun().NewRaw("SELECT name FROM repositories WHERE id = ?", ids[name]).Scan(t.Context(), &stored); err != nil || stored != name {
			t.Errorf("after Update the name is %q, %v; want %q", stored, err, name)
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
