package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// TestACorruptOAuthStateRowIsAnError: a pending connection's row whose
// columns break its rules (written past the application, here by the
// superuser) is taken as the loader's error, never as a connection, and
// not as not found. The transaction then rolls back, so the row stays
// until it expires; put right, it is taken.
func TestACorruptOAuthStateRowIsAnError(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	s := newServer(t, tenant, "wiki", bearer(t, "tok-1234567890"))
	f.insert(t, s, []byte{1})
	authz, _ := server.ParseURL("https://as.example.com/authorize")
	token, _ := server.ParseURL("https://as.example.com/token")
	as := server.AuthorizationServer{Issuer: "https://as.example.com", AuthorizationEndpoint: authz, TokenEndpoint: token}
	pc, err := server.NewPendingConnection("state-1", "session-1", s.ID(), []byte{1}, as, "https://codelotse.example.com/ui/oauth/callback", now)
	if err != nil {
		t.Fatal(err)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.OAuthStates().Insert(ctx, pc, []byte("sealed"))
	})
	su := pgtest.Superuser(t, f.db)
	set := func(column string, value any) {
		t.Helper()
		if _, err := su.Bun().ExecContext(t.Context(), "UPDATE oauth_connect_states SET "+column+" = ? WHERE state_hash = ?", value, pc.StateHash()); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ column, bad, good string }{
		{"issuer", "", "https://as.example.com"},
		{"authorization_endpoint", "http://as.example.com/authorize", "https://as.example.com/authorize"},
		{"token_endpoint", "https://user:pass@as.example.com/token", "https://as.example.com/token"},
		{"token_endpoint", "as.example.com/token", "https://as.example.com/token"},
		{"redirect_uri", "", "https://codelotse.example.com/ui/oauth/callback"},
	} {
		set(c.column, c.bad)
		err := f.try(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, sealed, err := tx.OAuthStates().Take(ctx, pc.StateHash())
			if got != nil || sealed != nil {
				t.Errorf("%s %q: Take = %+v, %q", c.column, c.bad, got, sealed)
			}
			return err
		})
		if !errors.Is(err, server.ErrPendingConnectionMalformed) || errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Take with %s %q = %v, want ErrPendingConnectionMalformed", c.column, c.bad, err)
		}
		set(c.column, c.good)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		got, sealed, err := tx.OAuthStates().Take(ctx, pc.StateHash())
		if err != nil || got == nil || got.Issuer() != "https://as.example.com" || string(sealed) != "sealed" {
			t.Errorf("Take of the row put right = %+v, %q, %v", got, sealed, err)
		}
		return nil
	})
}
