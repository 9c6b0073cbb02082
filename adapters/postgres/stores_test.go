package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/porttest"
)

// fixture is a migrated database with its stores.
type fixture struct {
	db       *postgres.DB
	tenants  *postgres.Tenants
	accounts *postgres.Accounts
	rotator  *postgres.Rotator
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := pgtest.New(t)
	return fixture{db: db, tenants: postgres.NewTenants(db), accounts: postgres.NewAccounts(db), rotator: postgres.NewRotator(db)}
}

func (f fixture) tenant(t *testing.T, name string) string {
	t.Helper()
	id, err := f.accounts.CreateTenant(t.Context(), name)
	if err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
	return id
}

// in runs fn in tenant and fails the test on error.
func (f fixture) in(t *testing.T, tenant string, fn func(ctx context.Context, tx ports.TenantTx) error) {
	t.Helper()
	if err := f.tenants.InTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("InTenant: %v", err)
	}
}

// try runs fn in tenant and returns its error.
func (f fixture) try(t *testing.T, tenant string, fn func(ctx context.Context, tx ports.TenantTx) error) error {
	t.Helper()
	return f.tenants.InTenant(t.Context(), tenant, fn)
}

// newID is a random canonical UUID.
var newID = porttest.NewID

var now = time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)

func newServer(t testing.TB, tenant, name string, cred server.Credential) *server.Server {
	t.Helper()
	n, err := server.ParseName(name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := server.ParseURL("https://" + name + ".example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(newID(t), tenant, n, u, cred, true, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bearer(t testing.TB, token string) server.Credential {
	t.Helper()
	c, err := server.NewBearer(token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// insert stores s with cred in its tenant and fails the test on error.
func (f fixture) insert(t *testing.T, s *server.Server, cred []byte) {
	t.Helper()
	f.in(t, s.TenantID(), func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Servers().Insert(ctx, s, cred, 20)
	})
}

// rawCredential reads encrypted_credentials as the superuser, bypassing
// the stores and row-level security.
func rawCredential(t *testing.T, db *postgres.DB, id string) []byte {
	t.Helper()
	var b []byte
	if err := pgtest.Superuser(t, db).Bun().NewRaw("SELECT encrypted_credentials FROM mcp_servers WHERE id = ?", id).Scan(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInTenantRejectsMalformedTenant(t *testing.T) {
	f := newFixture(t)
	err := f.tenants.InTenant(t.Context(), "not-a-uuid", func(context.Context, ports.TenantTx) error { return nil })
	if !errors.Is(err, ports.ErrNotFound) || !errors.Is(err, postgres.ErrInvalidTenantID) {
		t.Errorf("InTenant(not-a-uuid) = %v, want ErrNotFound and ErrInvalidTenantID", err)
	}
}

func TestInTenantRollsBackOnError(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	s := newServer(t, a, "wiki", server.NoCredential())
	boom := errors.New("boom")
	err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Servers().Insert(ctx, s, nil, 20); err != nil {
			return err
		}
		if err := tx.Audit().Append(ctx, ports.AuditEvent{Action: "server.create", Actor: "t"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTenant = %v, want boom", err)
	}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Servers().Get(ctx, s.ID()); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Get after rollback = %v, want ErrNotFound", err)
		}
		events, err := tx.Audit().Recent(ctx, 10)
		if err != nil || len(events) != 0 {
			t.Errorf("Recent after rollback = %v, %v; want none", events, err)
		}
		return nil
	})
}

// The server port's semantics are the contract suite's
// (porttest.ServerRepo); here, what only the database shows: the
// ciphertext is stored byte for byte, and no credential is NULL.
func TestServerCredentialIsStoredByteForByte(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	wiki := newServer(t, a, "wiki", bearer(t, "secret-token-wxyz"))
	docs := newServer(t, a, "docs", server.NoCredential())
	cred := []byte{0x00, 0x01, 0xfe, 0xff, '\\', 'x', 0x27}
	f.insert(t, wiki, cred)
	f.insert(t, docs, nil)
	if got := rawCredential(t, f.db, wiki.ID()); !slices.Equal(got, cred) {
		t.Errorf("encrypted_credentials = %x, want %x", got, cred)
	}
	if got := rawCredential(t, f.db, docs.ID()); got != nil {
		t.Errorf("encrypted_credentials of a server without credential = %x, want NULL", got)
	}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, wiki.ID(), func(*server.Server) (ports.CredentialUpdate, error) {
			return ports.CredentialUpdate{Replace: true}, nil
		})
		return err
	})
	if got := rawCredential(t, f.db, wiki.ID()); got != nil {
		t.Errorf("encrypted_credentials after a clear = %x, want NULL", got)
	}
}

func TestServersOfOtherTenantsAreHidden(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	s := newServer(t, a, "wiki", bearer(t, "secret-token-wxyz"))
	f.insert(t, s, []byte("ciphertext"))
	err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status) VALUES (?, ?, 'search', 'ok')", a, s.ID())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Servers().Get(ctx, s.ID()); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Get(A's server) = %v, want ErrNotFound", err)
		}
		_, err := tx.Servers().Update(ctx, s.ID(), func(*server.Server) (ports.CredentialUpdate, error) {
			t.Error("B Update(A's server) called fn")
			return ports.CredentialUpdate{Replace: true}, nil
		})
		if !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Update(A's server) = %v, want ErrNotFound", err)
		}
		if err := tx.Servers().Delete(ctx, s.ID()); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Delete(A's server) = %v, want ErrNotFound", err)
		}
		if _, err := tx.Servers().Credential(ctx, s.ID()); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Credential(A's server) = %v, want ErrNotFound", err)
		}
		list, err := tx.Servers().List(ctx)
		if err != nil || len(list) != 0 {
			t.Errorf("B List = %d servers, %v; want none", len(list), err)
		}
		exist, err := tx.Policies().ServersExist(ctx, []string{s.ID()})
		if err != nil || exist[s.ID()] {
			t.Errorf("B ServersExist(A's server) = %v, %v; want false", exist, err)
		}
		return nil
	})

	// Below the stores: B's scope sees none of A's rows, even without a WHERE.
	err = f.db.WithTenant(t.Context(), b, func(ctx context.Context, tx bun.Tx) error {
		for _, table := range []string{"mcp_servers", "mcp_tool_calls"} {
			var n int
			if err := tx.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("B sees %d rows of %s, want 0", n, table)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A still has everything.
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Get(ctx, s.ID())
		if err != nil {
			t.Fatalf("A Get: %v", err)
		}
		if got.Name() != s.Name() || !got.UpdatedAt().Equal(s.UpdatedAt()) {
			t.Errorf("A's server changed: %v", got)
		}
		return nil
	})
	if got := rawCredential(t, f.db, s.ID()); string(got) != "ciphertext" {
		t.Errorf("A's credential = %q after B's attempts, want ciphertext", got)
	}
}

func countServers(t *testing.T, f fixture, tenant string) int {
	t.Helper()
	var n int
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		list, err := tx.Servers().List(ctx)
		n = len(list)
		return err
	})
	return n
}

func TestServerLimit(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	for i := range 19 {
		f.insert(t, newServer(t, a, fmt.Sprintf("s%02d", i), server.NoCredential()), nil)
	}
	// Another tenant's servers do not count.
	f.insert(t, newServer(t, b, "other", server.NoCredential()), nil)

	for round := range 5 {
		// Two concurrent inserts for the 20th slot: exactly one wins.
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		start := make(chan struct{})
		for i := range 2 {
			s := newServer(t, a, fmt.Sprintf("r%dx%d", round, i), server.NoCredential())
			wg.Go(func() {
				<-start
				errs[i] = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
					return tx.Servers().Insert(ctx, s, nil, 20)
				})
			})
		}
		close(start)
		wg.Wait()
		ok, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ports.ErrTooManyServers):
				refused++
			default:
				t.Errorf("concurrent Insert = %v", err)
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: %d inserts succeeded, %d refused; want 1 and 1 (%v)", round, ok, refused, errs)
		}
		if n := countServers(t, f, a); n != 20 {
			t.Fatalf("round %d: tenant has %d servers, want 20", round, n)
		}
		// Free the slot again for the next round.
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			list, err := tx.Servers().List(ctx)
			if err != nil {
				return err
			}
			for _, s := range list {
				if s.Name().String()[0] == 'r' {
					return tx.Servers().Delete(ctx, s.ID())
				}
			}
			return errors.New("no server to delete")
		})
	}

	f.insert(t, newServer(t, a, "twentieth", server.NoCredential()), nil)
	err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Servers().Insert(ctx, newServer(t, a, "twentyfirst", server.NoCredential()), nil, 20)
	})
	if !errors.Is(err, ports.ErrTooManyServers) {
		t.Errorf("21st Insert = %v, want ErrTooManyServers", err)
	}
	if n := countServers(t, f, a); n != 20 {
		t.Errorf("tenant has %d servers, want 20", n)
	}
}

func TestUpdateHoldsRowLock(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	s := newServer(t, a, "wiki", server.NoCredential())
	f.insert(t, s, nil)

	locked := make(chan struct{})
	var wg sync.WaitGroup
	var firstErr, secondErr error
	wg.Go(func() {
		firstErr = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				close(locked)
				time.Sleep(300 * time.Millisecond) // the second Update must wait here
				s.RecordError("first")
				return ports.CredentialUpdate{}, nil
			})
			return err
		})
	})
	wg.Go(func() {
		<-locked
		secondErr = f.tenants.InTenant(t.Context(), a, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				s.RecordError(s.LastError() + "+second")
				return ports.CredentialUpdate{}, nil
			})
			return err
		})
	})
	wg.Wait()
	if firstErr != nil || secondErr != nil {
		t.Fatalf("Updates = %v, %v", firstErr, secondErr)
	}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Get(ctx, s.ID())
		if err != nil {
			return err
		}
		if got.LastError() != "first+second" {
			t.Errorf("lastError = %q, want first+second (the second Update saw the first's result)", got.LastError())
		}
		return nil
	})
}

// What only the database shows of the accounts port (its semantics are the
// contract suite's, porttest.Accounts): the hash is what is stored, and a
// lookup records the time of use.
func TestAccountsStoreTheHashAndTheTimeOfUse(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a := f.tenant(t, "a")
	hash := sha256.Sum256([]byte("token-a"))
	id, err := f.accounts.CreateToken(ctx, a, hash[:], []string{"tenant:manage", "repo:manage"})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	su := pgtest.Superuser(t, f.db)
	var stored []byte
	if err := su.Bun().NewRaw("SELECT token_hash FROM api_tokens WHERE id = ?", id).Scan(ctx, &stored); err != nil || !slices.Equal(stored, hash[:]) {
		t.Errorf("token_hash = %x, %v; want %x", stored, err, hash)
	}
	var used bool
	if err := su.Bun().NewRaw("SELECT last_used_at IS NOT NULL FROM api_tokens WHERE id = ?", id).Scan(ctx, &used); err != nil || used {
		t.Errorf("last_used_at set before a lookup = %v, %v", used, err)
	}
	if _, err := f.accounts.LookupToken(ctx, hash[:]); err != nil {
		t.Fatalf("LookupToken: %v", err)
	}
	if err := su.Bun().NewRaw("SELECT last_used_at IS NOT NULL FROM api_tokens WHERE id = ?", id).Scan(ctx, &used); err != nil || !used {
		t.Errorf("last_used_at set = %v, %v; want true", used, err)
	}
}

// The rotator's semantics are the contract suite's
// (porttest.CredentialRotator); here, the adapter's own refusal of an
// after that is not a server id.
func TestRotatorRefusesAMalformedAfter(t *testing.T) {
	f := newFixture(t)
	if _, err := f.rotator.Batch(t.Context(), "not-a-uuid", 3); err == nil {
		t.Error("Batch(not-a-uuid) succeeded")
	}
}
