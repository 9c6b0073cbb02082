package postgres_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
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

func newID(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

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

func snapshot(t testing.TB, serverName, toolName string) tool.Snapshot {
	t.Helper()
	d, err := tool.NewDefinition(toolName, "Searches.",
		[]byte(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		[]byte(`{"readOnlyHint":true}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tool.NewSnapshot(serverName, d, "Search the wiki.", now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameServer(t *testing.T, got, want *server.Server) {
	t.Helper()
	type view struct {
		ID, Tenant, Name, URL, Kind, Hint, LastError string
		Enabled                                      bool
		Ack, Disc, Created, Updated                  time.Time
		Tools                                        []string
	}
	v := func(s *server.Server) view {
		var tools []string
		for _, tl := range s.Tools() {
			tools = append(tools, fmt.Sprintf("%s|%s|%s|%s|%v|%s|%s", tl.Name(), tl.Description(), tl.InputSchema(),
				tl.Annotations(), tl.WriteCapable(), tl.Hash(), tl.ApprovedAt().UTC()))
		}
		return view{s.ID(), s.TenantID(), s.Name().String(), s.URL().String(), s.CredentialKind().String(),
			s.CredentialHint(), s.LastError(), s.Enabled(), s.AcknowledgedAt().UTC(), s.LastDiscoveryAt().UTC(),
			s.CreatedAt().UTC(), s.UpdatedAt().UTC(), tools}
	}
	g, w := v(got), v(want)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("server = %+v\nwant     %+v", g, w)
	}
}

// rawCredential reads encrypted_credentials as the superuser, bypassing
// the stores.
func rawCredential(t *testing.T, db *postgres.DB, id string) []byte {
	t.Helper()
	var b []byte
	if err := db.Bun().NewRaw("SELECT encrypted_credentials FROM mcp_servers WHERE id = ?", id).Scan(t.Context(), &b); err != nil {
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

func TestServerRepo(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	wiki := newServer(t, a, "wiki", bearer(t, "secret-token-wxyz"))
	docs := newServer(t, a, "docs", server.NoCredential())
	cred := []byte{0x00, 0x01, 0xfe, 0xff, '\\', 'x', 0x27}
	f.insert(t, wiki, cred)
	f.insert(t, docs, nil)

	t.Run("get", func(t *testing.T) {
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Get(ctx, wiki.ID())
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			sameServer(t, got, wiki)
			return nil
		})
	})

	t.Run("list is ordered by name", func(t *testing.T) {
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			list, err := tx.Servers().List(ctx)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			var names []string
			for _, s := range list {
				names = append(names, s.Name().String())
			}
			if !slices.Equal(names, []string{"docs", "wiki"}) {
				t.Errorf("List names = %v, want [docs wiki]", names)
			}
			return nil
		})
	})

	t.Run("credential is stored byte for byte", func(t *testing.T) {
		if got := rawCredential(t, f.db, wiki.ID()); !slices.Equal(got, cred) {
			t.Errorf("encrypted_credentials = %x, want %x", got, cred)
		}
		if got := rawCredential(t, f.db, docs.ID()); got != nil {
			t.Errorf("encrypted_credentials of a server without credential = %x, want NULL", got)
		}
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Credential(ctx, wiki.ID())
			if err != nil || !slices.Equal(got, cred) {
				t.Errorf("Credential = %x, %v; want %x", got, err, cred)
			}
			got, err = tx.Servers().Credential(ctx, docs.ID())
			if err != nil || got != nil {
				t.Errorf("Credential without one = %x, %v; want nil", got, err)
			}
			return nil
		})
	})

	t.Run("duplicate name", func(t *testing.T) {
		dup := newServer(t, a, "wiki", server.NoCredential())
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Servers().Insert(ctx, dup, nil, 20); !errors.Is(err, ports.ErrNameTaken) {
				t.Errorf("Insert duplicate name = %v, want ErrNameTaken", err)
			}
			// The refused insert leaves the transaction usable.
			if _, err := tx.Servers().List(ctx); err != nil {
				t.Errorf("List after ErrNameTaken = %v", err)
			}
			return tx.Audit().Append(ctx, ports.AuditEvent{Action: "server.create.refused", Actor: "t"})
		})
	})

	t.Run("duplicate id", func(t *testing.T) {
		n, _ := server.ParseName("other")
		u, _ := server.ParseURL("https://other.example.com/mcp")
		dup, err := server.NewServer(wiki.ID(), a, n, u, server.NoCredential(), true, now)
		if err != nil {
			t.Fatal(err)
		}
		err = f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Insert(ctx, dup, nil, 20)
		})
		if !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Insert duplicate id = %v, want ErrConflict", err)
		}
	})

	t.Run("server of another tenant refused", func(t *testing.T) {
		other := newServer(t, f.tenant(t, "other"), "x", server.NoCredential())
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Insert(ctx, other, nil, 20)
		})
		if err == nil {
			t.Error("Insert of another tenant's server succeeded")
		}
	})

	t.Run("update writes every mutable column", func(t *testing.T) {
		later := now.Add(time.Hour)
		var want *server.Server
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Update(ctx, wiki.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				name, _ := server.ParseName("wiki2")
				u, _ := server.ParseURL("https://wiki2.example.com:8443/mcp")
				c, _ := server.NewHeader("x-api-key", "header-value-1234")
				ack, off := true, false
				if _, err := s.Apply(server.Patch{Name: &name, URL: &u, Credential: &c, Acknowledged: &ack, Enabled: &off}, later); err != nil {
					return ports.CredentialUpdate{}, err
				}
				if err := s.ReplaceTools([]tool.Snapshot{snapshot(t, "wiki2", "search")}, later); err != nil {
					return ports.CredentialUpdate{}, err
				}
				s.RecordDiscovery(later, "timeout")
				return ports.CredentialUpdate{Replace: true, Encrypted: []byte("new-ciphertext")}, nil
			})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			want = got
			return nil
		})
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Get(ctx, wiki.ID())
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			sameServer(t, got, want)
			if got.Name().String() != "wiki2" || got.Enabled() || got.CredentialKind() != server.KindHeader ||
				got.LastError() != "timeout" || len(got.Tools()) != 1 || !got.UpdatedAt().Equal(later) {
				t.Errorf("Get after Update = %+v, want the update stored", got)
			}
			return nil
		})
		if got := rawCredential(t, f.db, wiki.ID()); string(got) != "new-ciphertext" {
			t.Errorf("encrypted_credentials = %q, want new-ciphertext", got)
		}
	})

	t.Run("update keeps or clears the credential", func(t *testing.T) {
		update := func(cu ports.CredentialUpdate) {
			f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
				_, err := tx.Servers().Update(ctx, wiki.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
					s.RecordError("")
					return cu, nil
				})
				return err
			})
		}
		update(ports.CredentialUpdate{})
		if got := rawCredential(t, f.db, wiki.ID()); string(got) != "new-ciphertext" {
			t.Errorf("after keep: encrypted_credentials = %q, want new-ciphertext", got)
		}
		update(ports.CredentialUpdate{Replace: true})
		if got := rawCredential(t, f.db, wiki.ID()); got != nil {
			t.Errorf("after clear: encrypted_credentials = %q, want NULL", got)
		}
	})

	t.Run("update fn error rolls back nothing written", func(t *testing.T) {
		boom := errors.New("boom")
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, docs.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				return ports.CredentialUpdate{}, boom
			})
			return err
		})
		if !errors.Is(err, boom) {
			t.Errorf("Update with failing fn = %v, want boom", err)
		}
	})

	t.Run("rename to a taken name", func(t *testing.T) {
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, docs.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				name, _ := server.ParseName("wiki2")
				_, err := s.Apply(server.Patch{Name: &name}, now)
				return ports.CredentialUpdate{}, err
			})
			return err
		})
		if !errors.Is(err, ports.ErrNameTaken) {
			t.Errorf("rename to a taken name = %v, want ErrNameTaken", err)
		}
	})

	t.Run("missing and malformed ids are not found", func(t *testing.T) {
		for _, id := range []string{newID(t), "not-a-uuid", "", "'; DROP TABLE mcp_servers; --"} {
			f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
				if _, err := tx.Servers().Get(ctx, id); !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("Get(%q) = %v, want ErrNotFound", id, err)
				}
				_, err := tx.Servers().Update(ctx, id, func(*server.Server) (ports.CredentialUpdate, error) {
					t.Errorf("Update(%q) called fn", id)
					return ports.CredentialUpdate{}, nil
				})
				if !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("Update(%q) = %v, want ErrNotFound", id, err)
				}
				if err := tx.Servers().Delete(ctx, id); !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("Delete(%q) = %v, want ErrNotFound", id, err)
				}
				if _, err := tx.Servers().Credential(ctx, id); !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("Credential(%q) = %v, want ErrNotFound", id, err)
				}
				return nil
			})
		}
	})

	t.Run("delete removes the server and its calls", func(t *testing.T) {
		err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status) VALUES (?, ?, 'search', 'ok')", a, docs.ID())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Delete(ctx, docs.ID())
		})
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			if _, err := tx.Servers().Get(ctx, docs.ID()); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("Get after Delete = %v, want ErrNotFound", err)
			}
			if err := tx.Servers().Delete(ctx, docs.ID()); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("second Delete = %v, want ErrNotFound", err)
			}
			return nil
		})
		var calls int
		if err := f.db.Bun().NewRaw("SELECT count(*) FROM mcp_tool_calls WHERE server_id = ?", docs.ID()).Scan(t.Context(), &calls); err != nil {
			t.Fatal(err)
		}
		if calls != 0 {
			t.Errorf("%d tool calls left after Delete, want 0", calls)
		}
	})
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
		sameServer(t, got, s)
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

func TestRepositoryRepo(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	repo := ports.Repository{ID: newID(t), Name: "acme/api", Visibility: policy.VisibilityPrivate}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Repositories().Insert(ctx, repo)
	})

	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Repositories().Get(ctx, repo.ID)
		if err != nil || got != repo {
			t.Errorf("Get = %+v, %v; want %+v", got, err, repo)
		}
		err = tx.Repositories().Insert(ctx, ports.Repository{ID: newID(t), Name: "acme/api", Visibility: policy.VisibilityPublic})
		if !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Insert duplicate name = %v, want ErrConflict", err)
		}
		return nil
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Repositories().SetVisibility(ctx, repo.ID, policy.VisibilityPublic)
		want := repo
		want.Visibility = policy.VisibilityPublic
		if err != nil || got != want {
			t.Errorf("SetVisibility = %+v, %v; want %+v", got, err, want)
		}
		got, err = tx.Repositories().Get(ctx, repo.ID)
		if err != nil || got != want {
			t.Errorf("Get after SetVisibility = %+v, %v; want %+v", got, err, want)
		}
		return nil
	})
	// The same name in another tenant is fine; A's repository is invisible to B.
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Repositories().Insert(ctx, ports.Repository{ID: newID(t), Name: "acme/api", Visibility: policy.VisibilityInternal}); err != nil {
			t.Errorf("Insert same name in tenant B = %v", err)
		}
		for _, id := range []string{repo.ID, newID(t), "nope"} {
			if _, err := tx.Repositories().Get(ctx, id); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Get(%q) = %v, want ErrNotFound", id, err)
			}
			if _, err := tx.Repositories().SetVisibility(ctx, id, policy.VisibilityPrivate); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B SetVisibility(%q) = %v, want ErrNotFound", id, err)
			}
		}
		return nil
	})
}

func section(t testing.TB, mode string, servers []string, maxCalls int) policy.McpSection {
	t.Helper()
	s, err := policy.NewMcpSection(mode, servers, &maxCalls)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameSection(t *testing.T, what string, got, want policy.McpSection) {
	t.Helper()
	if got.Mode() != want.Mode() || !slices.Equal(got.Servers(), want.Servers()) || got.MaxCalls() != want.MaxCalls() {
		t.Errorf("%s = %v %v %d, want %v %v %d", what, got.Mode(), got.Servers(), got.MaxCalls(),
			want.Mode(), want.Servers(), want.MaxCalls())
	}
}

func TestPolicyRepo(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	s1 := newServer(t, a, "wiki", server.NoCredential())
	s2 := newServer(t, a, "docs", server.NoCredential())
	sb := newServer(t, b, "wiki", server.NoCredential())
	f.insert(t, s1, nil)
	f.insert(t, s2, nil)
	f.insert(t, sb, nil)
	repo := ports.Repository{ID: newID(t), Name: "acme/api", Visibility: policy.VisibilityPrivate}

	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Repositories().Insert(ctx, repo); err != nil {
			return err
		}
		p := tx.Policies()
		if d, err := p.Default(ctx); err != nil || d != nil {
			t.Errorf("Default before Put = %v, %v; want nil", d, err)
		}
		first := section(t, "on", []string{s2.ID(), s1.ID()}, 7)
		if err := p.PutDefault(ctx, first); err != nil {
			t.Fatalf("PutDefault: %v", err)
		}
		second := section(t, "off", []string{s1.ID()}, 3)
		if err := p.PutDefault(ctx, second); err != nil {
			t.Fatalf("PutDefault again: %v", err)
		}
		d, err := p.Default(ctx)
		if err != nil || d == nil {
			t.Fatalf("Default = %v, %v", d, err)
		}
		sameSection(t, "Default", *d, second)

		if _, ok, err := p.Repository(ctx, repo.ID); ok || err != nil {
			t.Errorf("Repository before Put: ok %v, err %v; want false, nil", ok, err)
		}
		rs := section(t, "inherit", []string{s1.ID(), s2.ID()}, 20)
		if err := p.PutRepository(ctx, repo.ID, rs); err != nil {
			t.Fatalf("PutRepository: %v", err)
		}
		rs = section(t, "on", []string{s2.ID()}, 1)
		if err := p.PutRepository(ctx, repo.ID, rs); err != nil {
			t.Fatalf("PutRepository again: %v", err)
		}
		got, ok, err := p.Repository(ctx, repo.ID)
		if err != nil || !ok {
			t.Fatalf("Repository = %v, %v", ok, err)
		}
		sameSection(t, "Repository", got, rs)
		if _, ok, err := p.Repository(ctx, "not-a-uuid"); ok || err != nil {
			t.Errorf("Repository(not-a-uuid): ok %v, err %v; want false, nil", ok, err)
		}
		for _, id := range []string{newID(t), "not-a-uuid"} {
			if err := p.PutRepository(ctx, id, rs); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("PutRepository(%q) = %v, want ErrNotFound", id, err)
			}
		}
		return nil
	})

	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		unknown := newID(t)
		ids := []string{s1.ID(), sb.ID(), unknown, "not-a-uuid", s2.ID()}
		got, err := tx.Policies().ServersExist(ctx, ids)
		if err != nil {
			t.Fatalf("ServersExist: %v", err)
		}
		want := map[string]bool{s1.ID(): true, sb.ID(): false, unknown: false, "not-a-uuid": false, s2.ID(): true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ServersExist = %v, want %v", got, want)
		}
		if got, err := tx.Policies().ServersExist(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("ServersExist(nil) = %v, %v; want empty", got, err)
		}
		return nil
	})

	// B sees neither A's default nor A's repository policy, and cannot write one.
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		if d, err := tx.Policies().Default(ctx); err != nil || d != nil {
			t.Errorf("B Default = %v, %v; want nil", d, err)
		}
		if _, ok, err := tx.Policies().Repository(ctx, repo.ID); ok || err != nil {
			t.Errorf("B Repository(A's): ok %v, err %v; want false, nil", ok, err)
		}
		err := tx.Policies().PutRepository(ctx, repo.ID, section(t, "off", nil, 5))
		if !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B PutRepository(A's) = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func TestAuditLog(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	at := now.Add(-time.Hour)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Audit().Append(ctx, ports.AuditEvent{Action: "server.create", Actor: "tok1", Target: "s1", At: at,
			Details: map[string]any{"name": "wiki", "fields": []any{"name", "url"}}}); err != nil {
			return err
		}
		for _, action := range []string{"server.update", "server.delete"} {
			if err := tx.Audit().Append(ctx, ports.AuditEvent{Action: action, Actor: "tok1", Target: "s1"}); err != nil {
				return err
			}
		}
		return nil
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		events, err := tx.Audit().Recent(ctx, 10)
		if err != nil {
			t.Fatalf("Recent: %v", err)
		}
		var actions []string
		for _, e := range events {
			actions = append(actions, e.Action)
		}
		if !slices.Equal(actions, []string{"server.delete", "server.update", "server.create"}) {
			t.Errorf("Recent actions = %v, want newest first", actions)
		}
		last := events[2]
		if !last.At.Equal(at) || last.Actor != "tok1" || last.Target != "s1" ||
			fmt.Sprint(last.Details) != fmt.Sprint(map[string]any{"name": "wiki", "fields": []any{"name", "url"}}) {
			t.Errorf("event = %+v", last)
		}
		if events[0].At.IsZero() || events[1].Details == nil {
			t.Errorf("event without time or details = %+v", events[0])
		}
		two, err := tx.Audit().Recent(ctx, 2)
		if err != nil || len(two) != 2 || two[0].Action != "server.delete" {
			t.Errorf("Recent(2) = %v, %v", two, err)
		}
		if none, err := tx.Audit().Recent(ctx, 0); err != nil || len(none) != 0 {
			t.Errorf("Recent(0) = %v, %v; want none", none, err)
		}
		return nil
	})
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		events, err := tx.Audit().Recent(ctx, 10)
		if err != nil || len(events) != 0 {
			t.Errorf("B Recent = %v, %v; want none", events, err)
		}
		return nil
	})
}

func TestAccounts(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a := f.tenant(t, "a")
	hash := sha256.Sum256([]byte("token-a"))
	id, err := f.accounts.CreateToken(ctx, a, hash[:], []string{"tenant:manage", "repo:manage"})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	got, err := f.accounts.LookupToken(ctx, hash[:])
	want := ports.Principal{TokenID: id, TenantID: a, Permissions: []string{"tenant:manage", "repo:manage"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("LookupToken = %+v, %v; want %+v", got, err, want)
	}
	var used bool
	if err := f.db.Bun().NewRaw("SELECT last_used_at IS NOT NULL FROM api_tokens WHERE id = ?", id).Scan(ctx, &used); err != nil || !used {
		t.Errorf("last_used_at set = %v, %v; want true", used, err)
	}
	var stored []byte
	if err := f.db.Bun().NewRaw("SELECT token_hash FROM api_tokens WHERE id = ?", id).Scan(ctx, &stored); err != nil || !slices.Equal(stored, hash[:]) {
		t.Errorf("token_hash = %x, %v; want %x", stored, err, hash)
	}

	other := sha256.Sum256([]byte("token-b"))
	if _, err := f.accounts.LookupToken(ctx, other[:]); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupToken(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := f.accounts.LookupToken(ctx, nil); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupToken(nil) = %v, want ErrNotFound", err)
	}
	for _, tenant := range []string{newID(t), "not-a-uuid"} {
		if _, err := f.accounts.CreateToken(ctx, tenant, other[:], nil); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("CreateToken(tenant %q) = %v, want ErrNotFound", tenant, err)
		}
	}
	if _, err := f.accounts.CreateToken(ctx, a, hash[:], nil); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("CreateToken(same hash) = %v, want ErrConflict", err)
	}
	if _, err := f.accounts.CreateToken(ctx, a, []byte("short"), nil); err == nil {
		t.Error("CreateToken with a 5-byte hash succeeded")
	}
	noPerms, err := f.accounts.CreateToken(ctx, a, other[:], nil)
	if err != nil {
		t.Fatalf("CreateToken without permissions: %v", err)
	}
	if p, err := f.accounts.LookupToken(ctx, other[:]); err != nil || p.TokenID != noPerms || len(p.Permissions) != 0 {
		t.Errorf("LookupToken = %+v, %v; want no permissions", p, err)
	}
}

func TestRotator(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	want := map[string][]byte{}
	for i := range 7 {
		tenant := a
		if i%2 == 1 {
			tenant = b
		}
		s := newServer(t, tenant, fmt.Sprintf("s%d", i), bearer(t, "secret-token-wxyz"))
		cred := []byte(fmt.Sprintf("cipher-%d", i))
		f.insert(t, s, cred)
		want[s.ID()] = cred
	}
	f.insert(t, newServer(t, a, "nocred", server.NoCredential()), nil)

	var (
		got   []ports.EncryptedCredential
		after string
		pages int
	)
	for {
		batch, err := f.rotator.Batch(ctx, after, 3)
		if err != nil {
			t.Fatalf("Batch(%q): %v", after, err)
		}
		if len(batch) > 3 {
			t.Fatalf("Batch returned %d, limit 3", len(batch))
		}
		if len(batch) == 0 {
			break
		}
		pages++
		got = append(got, batch...)
		after = batch[len(batch)-1].ServerID
	}
	if pages != 3 || len(got) != len(want) {
		t.Fatalf("%d credentials in %d pages, want %d in 3", len(got), pages, len(want))
	}
	if !slices.IsSortedFunc(got, func(x, y ports.EncryptedCredential) int { return compare(x.ServerID, y.ServerID) }) {
		t.Errorf("Batch not in id order: %v", got)
	}
	for _, c := range got {
		if !slices.Equal(c.Encrypted, want[c.ServerID]) {
			t.Errorf("Batch %s = %q, want %q", c.ServerID, c.Encrypted, want[c.ServerID])
		}
	}
	if _, err := f.rotator.Batch(ctx, "not-a-uuid", 3); err == nil {
		t.Error("Batch(not-a-uuid) succeeded")
	}

	target := got[0]
	ok, err := f.rotator.Replace(ctx, target.ServerID, target.Encrypted, []byte("rotated"))
	if err != nil || !ok {
		t.Fatalf("Replace = %v, %v; want true", ok, err)
	}
	if raw := rawCredential(t, f.db, target.ServerID); string(raw) != "rotated" {
		t.Errorf("credential after Replace = %q, want rotated", raw)
	}
	ok, err = f.rotator.Replace(ctx, target.ServerID, target.Encrypted, []byte("again"))
	if err != nil || ok {
		t.Errorf("Replace with a stale old value = %v, %v; want false", ok, err)
	}
	if raw := rawCredential(t, f.db, target.ServerID); string(raw) != "rotated" {
		t.Errorf("credential after stale Replace = %q, want rotated", raw)
	}
	for _, id := range []string{newID(t), "not-a-uuid"} {
		if ok, err := f.rotator.Replace(ctx, id, []byte("x"), []byte("y")); ok || err != nil {
			t.Errorf("Replace(%q) = %v, %v; want false, nil", id, ok, err)
		}
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
