package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports/portfake"
)

const (
	saverTenant = "aaaaaaaa-0000-4000-8000-000000000001"
	saverServer = "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
)

func connectedCode(t *testing.T, refresh string) server.Credential {
	t.Helper()
	c, err := server.NewOAuthAuthorizationCode("client-1", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := server.ParseURL("https://as.example.com/token")
	c, err = c.WithConnection("https://as.example.com", u, refresh, "token:t", time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCredentialSaver: a rotated refresh token is stored only while the
// stored credential is the one the connection opened (or its own last
// save); a credential an admin replaced meanwhile is never overwritten.
func TestCredentialSaver(t *testing.T) {
	cipher := &portfake.Cipher{Keys: []string{"k1"}}
	first := connectedCode(t, "refresh-1")
	setup := func(t *testing.T) (*portfake.Tenants, *portfake.Servers, []byte) {
		repo := portfake.NewServers()
		tenants := &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{ServerRepo: repo} }}
		u, _ := server.ParseURL("https://wiki.example.com/mcp")
		n, _ := server.ParseName("wiki")
		s, err := server.NewServer(saverServer, saverTenant, n, u, first, true, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := app.SealCredential(cipher, saverServer, first)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Insert(context.Background(), s, enc, 20); err != nil {
			t.Fatal(err)
		}
		return tenants, repo, enc
	}
	opened := func(t *testing.T, repo *portfake.Servers) string {
		c, err := app.OpenCredential(cipher, saverServer, repo.Creds[saverServer])
		if err != nil {
			t.Fatal(err)
		}
		o, _ := c.OAuth()
		return o.RefreshToken
	}

	t.Run("saves twice in a row", func(t *testing.T) {
		tenants, repo, enc := setup(t)
		save := app.CredentialSaverFor(tenants, cipher, saverTenant, saverServer, enc)
		for _, r := range []string{"refresh-2", "refresh-3"} {
			if err := save(context.Background(), connectedCode(t, r)); err != nil {
				t.Fatalf("save %s: %v", r, err)
			}
			if got := opened(t, repo); got != r {
				t.Errorf("stored refresh token %q, want %q", got, r)
			}
		}
	})
	t.Run("credential replaced meanwhile", func(t *testing.T) {
		tenants, repo, enc := setup(t)
		save := app.CredentialSaverFor(tenants, cipher, saverTenant, saverServer, enc)
		admin, _ := app.SealCredential(cipher, saverServer, connectedCode(t, "admins-new"))
		repo.Creds[saverServer] = admin
		if err := save(context.Background(), connectedCode(t, "refresh-2")); !errors.Is(err, app.ErrCredentialChanged) {
			t.Fatalf("save = %v, want ErrCredentialChanged", err)
		}
		if got := opened(t, repo); got != "admins-new" {
			t.Errorf("the admin's credential was overwritten: %q", got)
		}
	})
	t.Run("a static credential is refused", func(t *testing.T) {
		tenants, _, enc := setup(t)
		b, _ := server.NewBearer("tok-1234567890")
		if err := app.CredentialSaverFor(tenants, cipher, saverTenant, saverServer, enc)(context.Background(), b); err == nil {
			t.Error("a bearer credential was saved")
		}
	})
	t.Run("no keys", func(t *testing.T) {
		tenants, _, enc := setup(t)
		err := app.CredentialSaverFor(tenants, &portfake.Cipher{}, saverTenant, saverServer, enc)(context.Background(), connectedCode(t, "r2"))
		if app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("save = %v, want keys_unavailable", err)
		}
	})
	t.Run("Target sets the saver for OAuth kinds only", func(t *testing.T) {
		tenants, repo, enc := setup(t)
		s := repo.Rows[saverServer]
		tg := app.Target(tenants, cipher, saverTenant, s, first, enc)
		if tg.ServerID != saverServer || tg.SaveCredential == nil || tg.URL != s.URL() {
			t.Errorf("Target = %+v", tg)
		}
		b, _ := server.NewBearer("tok-1234567890")
		if tg := app.Target(tenants, cipher, saverTenant, s, b, nil); tg.SaveCredential != nil || tg.ServerID != saverServer {
			t.Errorf("bearer Target = %+v", tg)
		}
	})
}
