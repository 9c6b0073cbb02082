package app_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

const (
	saverTenant = "aaaaaaaa-0000-4000-8000-000000000001"
	saverServer = "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
)

func connectedCode(t *testing.T, refresh string) server.Credential {
	t.Helper()
	c, err := server.NewOAuthAuthorizationCode("client-1", "", "", nil, "")
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
		enc, err := app.SealCredential(app.NewVault(cipher), saverServer, first)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Insert(context.Background(), s, enc, 20); err != nil {
			t.Fatal(err)
		}
		return tenants, repo, enc
	}
	opened := func(t *testing.T, repo *portfake.Servers) string {
		c, err := app.OpenCredential(app.NewVault(cipher), saverServer, repo.Creds[saverServer])
		if err != nil {
			t.Fatal(err)
		}
		o, _ := c.OAuth()
		return o.RefreshToken
	}

	t.Run("saves twice in a row", func(t *testing.T) {
		tenants, repo, enc := setup(t)
		save := app.CredentialSaverFor(tenants, app.NewVault(cipher), saverTenant, saverServer, enc)
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
		save := app.CredentialSaverFor(tenants, app.NewVault(cipher), saverTenant, saverServer, enc)
		admin, _ := app.SealCredential(app.NewVault(cipher), saverServer, connectedCode(t, "admins-new"))
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
		if err := app.CredentialSaverFor(tenants, app.NewVault(cipher), saverTenant, saverServer, enc)(context.Background(), b); err == nil {
			t.Error("a bearer credential was saved")
		}
	})
	t.Run("no keys", func(t *testing.T) {
		tenants, _, enc := setup(t)
		err := app.CredentialSaverFor(tenants, app.NewVault(&portfake.Cipher{}), saverTenant, saverServer, enc)(context.Background(), connectedCode(t, "r2"))
		if app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("save = %v, want keys_unavailable", err)
		}
	})
	t.Run("Target sets the saver for OAuth kinds only", func(t *testing.T) {
		tenants, repo, enc := setup(t)
		s := repo.Rows[saverServer]
		tg := app.Target(tenants, app.NewVault(cipher), saverTenant, s, first, enc)
		if tg.ServerID != saverServer || tg.SaveCredential == nil || tg.URL != s.URL() {
			t.Errorf("Target = %+v", tg)
		}
		b, _ := server.NewBearer("tok-1234567890")
		if tg := app.Target(tenants, app.NewVault(cipher), saverTenant, s, b, nil); tg.SaveCredential != nil || tg.ServerID != saverServer {
			t.Errorf("bearer Target = %+v", tg)
		}
	})
}

// recordingCipher is the fake cipher that remembers the associated data
// it was asked to seal and open under.
type recordingCipher struct {
	portfake.Cipher
	sealed, opened []string
}

func (c *recordingCipher) Seal(plain, aad []byte) ([]byte, error) {
	c.sealed = append(c.sealed, string(aad))
	return c.Cipher.Seal(plain, aad)
}

func (c *recordingCipher) Open(sealed, aad []byte) ([]byte, error) {
	c.opened = append(c.opened, string(aad))
	return c.Cipher.Open(sealed, aad)
}

// TestAssociatedDataGolden pins every associated data string byte for
// byte, as the functions return it and as sealing and opening use it:
// every ciphertext already stored (mcp_servers.encrypted_credentials,
// prompt_logs.sealed, oauth_connect_states.sealed) opens only under
// exactly these.
func TestAssociatedDataGolden(t *testing.T) {
	stateHash := sha256.Sum256([]byte("state-1"))
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"credential", app.CredentialAAD(saverServer), "mcp_servers:0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"},
		{"credential of an empty id", app.CredentialAAD(""), "mcp_servers:"},
		{"prompt log", app.PromptLogAAD("7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7"), "prompt_logs:7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7"},
		{"pending connection", app.StateAAD(stateHash[:]), "oauth_state:f36b45ae818809ee24ae2489edabfe3cf2a12627b6929c07fc7a3b885d414d44"},
		{"pending connection, fixed hash", app.StateAAD([]byte{0x00, 0x01, 0xab, 0xff}), "oauth_state:0001abff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("associated data %q, want %q", tt.got, tt.want)
			}
		})
	}

	t.Run("used to seal and open", func(t *testing.T) {
		c := &recordingCipher{Cipher: portfake.Cipher{Keys: []string{"k1"}}}
		enc, err := app.SealCredential(app.NewVault(c), saverServer, connectedCode(t, "refresh-1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.OpenCredential(app.NewVault(c), saverServer, enc); err != nil {
			t.Fatal(err)
		}
		secret, err := server.NewConnectSecret("verifier-1", "client-1")
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := app.SealConnectSecret(app.NewVault(c), []byte{0x00, 0x01, 0xab, 0xff}, secret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.OpenConnectSecret(app.NewVault(c), []byte{0x00, 0x01, 0xab, 0xff}, sealed); err != nil {
			t.Fatal(err)
		}
		log, err := app.SealPromptLog(app.NewVault(c), "7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7", []byte(`{"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.OpenPromptLog(app.NewVault(c), "7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7", log); err != nil {
			t.Fatal(err)
		}
		want := []string{"mcp_servers:" + saverServer, "oauth_state:0001abff", "prompt_logs:7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7"}
		if !slices.Equal(c.sealed, want) || !slices.Equal(c.opened, want) {
			t.Errorf("sealed under %q, opened under %q; want %q", c.sealed, c.opened, want)
		}
	})
}

// TestCredentialsOpenOnlyUnderTheirRow: a server's credential opens only
// as that server's, a pending connection's secret only under its own
// state; without keys nothing is sealed or opened (keys_unavailable),
// and a server without credential needs no key.
func TestCredentialsOpenOnlyUnderTheirRow(t *testing.T) {
	cipher := &portfake.Cipher{Keys: []string{"k1"}}
	cred := connectedCode(t, "refresh-1")
	enc, err := app.SealCredential(app.NewVault(cipher), saverServer, cred)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(enc), "refresh-1") {
		t.Fatal("the sealed credential holds the refresh token in clear")
	}
	if got, err := app.OpenCredential(app.NewVault(cipher), saverServer, enc); err != nil || got.Kind() != server.KindOAuthAuthorizationCode {
		t.Fatalf("OpenCredential = %v, %v", got, err)
	}
	if _, err := app.OpenCredential(app.NewVault(cipher), "aaaaaaaa-0000-4000-8000-000000000002", enc); err == nil {
		t.Error("a credential opened as another server's")
	}
	for name, c := range map[string]ports.Cipher{"no ring": nil, "no keys": &portfake.Cipher{}, "another key": &portfake.Cipher{Keys: []string{"k2"}}} {
		if _, err := app.OpenCredential(app.NewVault(c), saverServer, enc); app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("OpenCredential, %s: %v, want keys_unavailable", name, err)
		}
	}
	if _, err := app.SealCredential(app.NewVault(&portfake.Cipher{}), saverServer, cred); app.AsError(err).Code != app.CodeKeysUnavailable {
		t.Errorf("SealCredential without keys = %v, want keys_unavailable", err)
	}
	if _, err := app.SealCredential(app.Vault{}, saverServer, cred); app.AsError(err).Code != app.CodeKeysUnavailable {
		t.Errorf("SealCredential without a ring = %v, want keys_unavailable", err)
	}
	if sealed, err := app.SealCredential(app.Vault{}, saverServer, server.NoCredential()); err != nil || sealed != nil {
		t.Errorf("SealCredential(none) = %q, %v; want nothing, no key", sealed, err)
	}
	if got, err := app.OpenCredential(app.Vault{}, saverServer, nil); err != nil || got.Kind() != server.KindNone {
		t.Errorf("OpenCredential(nothing) = %v, %v; want none", got, err)
	}

	mine, other := sha256.Sum256([]byte("state-1")), sha256.Sum256([]byte("state-2"))
	secret, err := server.NewConnectSecret("verifier-SECRET", "client-1")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := app.SealConnectSecret(app.NewVault(cipher), mine[:], secret)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "verifier-SECRET") {
		t.Fatal("the sealed secret holds the verifier in clear")
	}
	if got, err := app.OpenConnectSecret(app.NewVault(cipher), mine[:], sealed); err != nil || got != secret {
		t.Fatalf("OpenConnectSecret = %v, %v", got, err)
	}
	for name, open := range map[string]func() error{
		"another state": func() error { _, err := app.OpenConnectSecret(app.NewVault(cipher), other[:], sealed); return err },
		"no keys": func() error {
			_, err := app.OpenConnectSecret(app.NewVault(&portfake.Cipher{}), mine[:], sealed)
			return err
		},
		"no ring": func() error { _, err := app.OpenConnectSecret(app.Vault{}, mine[:], sealed); return err },
		"seal, no keys": func() error {
			_, err := app.SealConnectSecret(app.NewVault(&portfake.Cipher{}), mine[:], secret)
			return err
		},
		"seal, no ring": func() error { _, err := app.SealConnectSecret(app.Vault{}, mine[:], secret); return err },
	} {
		if err := open(); app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("%s: %v, want keys_unavailable", name, err)
		}
	}
	// What opens but is not a connection's secret is an internal error,
	// not keys_unavailable.
	junk, _ := cipher.Seal([]byte(`{"verifier":""}`), app.StateAAD(mine[:]))
	if _, err := app.OpenConnectSecret(app.NewVault(cipher), mine[:], junk); err == nil || app.AsError(err).Code == app.CodeKeysUnavailable {
		t.Errorf("a malformed secret: %v, want an internal error", err)
	}

	// A review's prompt log opens only as that review's; one the ring
	// cannot open says so.
	const review, otherReview = "7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f7", "7d4f1b2a-3c5e-4f60-8a71-92b3c4d5e6f8"
	log, err := app.SealPromptLog(app.NewVault(cipher), review, []byte("prompt-SECRET"))
	if err != nil || strings.Contains(string(log), "prompt-SECRET") {
		t.Fatalf("SealPromptLog = %q, %v", log, err)
	}
	if got, err := app.OpenPromptLog(app.NewVault(cipher), review, log); err != nil || string(got) != "prompt-SECRET" {
		t.Fatalf("OpenPromptLog = %q, %v", got, err)
	}
	for name, open := range map[string]func() error{
		"another review": func() error { _, err := app.OpenPromptLog(app.NewVault(cipher), otherReview, log); return err },
		"another key": func() error {
			_, err := app.OpenPromptLog(app.NewVault(&portfake.Cipher{Keys: []string{"k2"}}), review, log)
			return err
		},
	} {
		if err := open(); app.AsError(err).Code != app.CodeKeysUnavailable || app.AsError(err).Message != "a prompt log cannot be decrypted with the configured keys" {
			t.Errorf("%s: %v, want keys_unavailable, the log cannot be decrypted", name, err)
		}
	}
	for name, c := range map[string]ports.Cipher{"no ring": nil, "no keys": &portfake.Cipher{}} {
		if _, err := app.OpenPromptLog(app.NewVault(c), review, log); app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("OpenPromptLog, %s: %v, want keys_unavailable", name, err)
		}
		if _, err := app.SealPromptLog(app.NewVault(c), review, []byte("x")); app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("SealPromptLog, %s: %v, want keys_unavailable", name, err)
		}
	}
}

// TestProbeKeys: the probe passes only with a ring that seals.
func TestProbeKeys(t *testing.T) {
	if err := app.ProbeKeys(app.NewVault(&portfake.Cipher{Keys: []string{"k1"}})); err != nil {
		t.Errorf("ProbeKeys with a key = %v", err)
	}
	for name, c := range map[string]ports.Cipher{"no ring": nil, "no keys": &portfake.Cipher{}} {
		if err := app.ProbeKeys(app.NewVault(c)); app.AsError(err).Code != app.CodeKeysUnavailable {
			t.Errorf("ProbeKeys, %s: %v, want keys_unavailable", name, err)
		}
	}
}

// TestReseal: a ciphertext under an older key is sealed again under the
// primary, for the same row; one under the primary is opened and left;
// one that does not open under its row is ErrNotOpened, also when it
// names the primary key.
func TestReseal(t *testing.T) {
	old := &portfake.Cipher{Keys: []string{"k0"}}
	ring := &portfake.Cipher{Keys: []string{"k1", "k0"}}
	aad := app.CredentialAAD(saverServer)
	underOld, _ := old.Seal([]byte("secret"), aad)
	underPrimary, _ := ring.Seal([]byte("secret"), aad)

	resealed, primary, err := app.Reseal(app.NewVault(ring), aad, underOld)
	if err != nil || primary || !ring.IsPrimary(resealed) {
		t.Fatalf("Reseal of an old key's ciphertext = %q, %v, %v", resealed, primary, err)
	}
	if plain, err := ring.Open(resealed, aad); err != nil || string(plain) != "secret" {
		t.Errorf("the resealed ciphertext opens as %q, %v", plain, err)
	}
	if resealed, primary, err := app.Reseal(app.NewVault(ring), aad, underPrimary); err != nil || !primary || resealed != nil {
		t.Errorf("Reseal under the primary = %q, %v, %v; want left as it is", resealed, primary, err)
	}
	tampered := []byte(strings.Replace(string(underPrimary), string(aad), "mcp_servers:other", 1))
	for name, sealed := range map[string][]byte{"another row's": tampered, "an unknown key's": []byte("k9|" + string(aad) + "|00"), "not a ciphertext": []byte("junk")} {
		if _, _, err := app.Reseal(app.NewVault(ring), aad, sealed); !errors.Is(err, app.ErrNotOpened) {
			t.Errorf("Reseal of %s ciphertext = %v, want ErrNotOpened", name, err)
		}
	}
	if _, _, err := app.Reseal(app.Vault{}, aad, underOld); errors.Is(err, app.ErrNotOpened) || app.AsError(err).Code != app.CodeKeysUnavailable {
		t.Errorf("Reseal without a ring = %v, want keys_unavailable", err)
	}
}
