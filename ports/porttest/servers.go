package porttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// ServerRepo is the contract of [ports.ServerRepo] (uses Tenants and
// Accounts; Delete also reads Calls, ClaimDiscovery, ClaimConnectionTest
// and TakeCall read the store's clock, which must be the wall clock).
func ServerRepo(t *testing.T, open Open) {
	t.Run("Insert then Get and List return the stored server, Credential its bytes", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		s := newServer(t, tenant, "wiki")
		if err := s.ReplaceTools([]tool.Snapshot{snapshot(t, "wiki", "search")}, T0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		plain := newServer(t, tenant, "plain")
		cred := []byte{0, 1, 2, 0xff}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Servers().Insert(ctx, s, cred, 20); err != nil {
				return err
			}
			return tx.Servers().Insert(ctx, plain, nil, 20)
		})
		h.read(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Get(ctx, s.ID())
			if err != nil {
				return err
			}
			sameServer(t, got, s)
			list, err := tx.Servers().List(ctx)
			if err != nil {
				return err
			}
			if len(list) != 2 {
				t.Fatalf("List: %d servers, want 2", len(list))
			}
			sameServer(t, list[0], plain)
			sameServer(t, list[1], s)
			enc, err := tx.Servers().Credential(ctx, s.ID())
			if err != nil || !bytes.Equal(enc, cred) {
				t.Errorf("Credential = %x, %v; want %x", enc, err, cred)
			}
			enc, err = tx.Servers().Credential(ctx, plain.ID())
			if err != nil || enc != nil {
				t.Errorf("Credential of a server without one = %x, %v; want nil", enc, err)
			}
			return nil
		})
	})

	t.Run("a missing, malformed or other tenant's id is ErrNotFound everywhere", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		foreign := h.seedServer(t, other, "theirs", []byte("secret"))
		for _, id := range []string{NewID(t), "not-a-uuid", "", "'; DROP TABLE mcp_servers; --", strings.ToUpper(foreign), foreign} {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				r := tx.Servers()
				_, err := r.Get(ctx, id)
				isErr(t, "Get "+id, err, ports.ErrNotFound)
				_, err = r.Update(ctx, id, func(*server.Server) (ports.CredentialUpdate, error) {
					t.Errorf("Update %q called fn", id)
					return ports.CredentialUpdate{}, nil
				})
				isErr(t, "Update "+id, err, ports.ErrNotFound)
				_, err = r.Credential(ctx, id)
				isErr(t, "Credential "+id, err, ports.ErrNotFound)
				_, _, err = r.ClaimDiscovery(ctx, id, time.Hour, ports.ListingDiscovery)
				isErr(t, "ClaimDiscovery "+id, err, ports.ErrNotFound)
				ok, err := r.TakeCall(ctx, id, 5, time.Hour)
				isErr(t, "TakeCall "+id, err, ports.ErrNotFound)
				if ok {
					t.Errorf("TakeCall %q granted a call", id)
				}
				isErr(t, "Delete "+id, r.Delete(ctx, id), ports.ErrNotFound)
				list, err := r.List(ctx)
				if err != nil || len(list) != 0 {
					t.Errorf("List of an empty tenant = %d servers, %v", len(list), err)
				}
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			enc, err := tx.Servers().Credential(ctx, foreign)
			if err != nil || string(enc) != "secret" {
				t.Errorf("the other tenant's server changed: %q, %v", enc, err)
			}
			return nil
		})
	})

	t.Run("Insert refuses a name used in the tenant, not one used in another tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		h.seedServer(t, tenant, "wiki", nil)
		h.seedServer(t, other, "wiki", nil)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			err := tx.Servers().Insert(ctx, newServer(t, tenant, "wiki"), nil, 20)
			isErr(t, "duplicate name", err, ports.ErrNameTaken)
			// The transaction goes on after the refusal.
			list, err := tx.Servers().List(ctx)
			if err != nil || len(list) != 1 {
				t.Errorf("after a refused insert: %d servers, %v; want 1", len(list), err)
			}
			return nil
		})
	})

	t.Run("Insert refuses a used id with ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("cred"))
		n, err := server.ParseName("other")
		if err != nil {
			t.Fatal(err)
		}
		u, err := server.ParseURL("https://other.example.com/mcp")
		if err != nil {
			t.Fatal(err)
		}
		dup, err := server.NewServer(id, tenant, n, u, server.NoCredential(), true, T0)
		if err != nil {
			t.Fatal(err)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			isErr(t, "used id", tx.Servers().Insert(ctx, dup, nil, 20), ports.ErrConflict)
			got, err := tx.Servers().Get(ctx, id)
			if err != nil || got.Name().String() != "wiki" {
				t.Errorf("after a refused insert: %v, %v; want wiki", got, err)
			}
			if enc, err := tx.Servers().Credential(ctx, id); err != nil || string(enc) != "cred" {
				t.Errorf("after a refused insert: credential %q, %v", enc, err)
			}
			return nil
		})
	})

	t.Run("Insert counts the tenant's servers against max, before the name", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		h.seedServer(t, other, "theirs", nil)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			r := tx.Servers()
			for _, name := range []string{"one", "two"} {
				if err := r.Insert(ctx, newServer(t, tenant, name), nil, 2); err != nil {
					t.Fatalf("insert %s under max 2: %v", name, err)
				}
			}
			isErr(t, "third server under max 2", r.Insert(ctx, newServer(t, tenant, "three"), nil, 2), ports.ErrTooManyServers)
			isErr(t, "a used name at max", r.Insert(ctx, newServer(t, tenant, "one"), nil, 2), ports.ErrTooManyServers)
			return r.Insert(ctx, newServer(t, tenant, "three"), nil, 3)
		})
	})

	t.Run("Insert refuses a server of another tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		s := newServer(t, other, "wiki")
		err := h.try(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Insert(ctx, s, nil, 20)
		})
		if err == nil {
			t.Error("a server of tenant B was stored in a transaction of tenant A")
		}
		for _, id := range []string{tenant, other} {
			h.in(t, id, func(ctx context.Context, tx ports.TenantTx) error {
				if list, err := tx.Servers().List(ctx); err != nil || len(list) != 0 {
					t.Errorf("tenant %s has %d servers, %v; want none", id, len(list), err)
				}
				return nil
			})
		}
	})

	t.Run("List orders by name in byte order", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		for _, name := range []string{"b", "ab", "a_b", "a1", "a"} {
			h.seedServer(t, tenant, name, nil)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			list, err := tx.Servers().List(ctx)
			if err != nil {
				return err
			}
			var names []string
			for _, s := range list {
				names = append(names, s.Name().String())
			}
			if want := []string{"a", "a1", "a_b", "ab", "b"}; !slices.Equal(names, want) {
				t.Errorf("List order %v, want %v", names, want)
			}
			return nil
		})
	})

	t.Run("the store keeps its own copy of a server", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		s := newServer(t, tenant, "wiki")
		rename := func(s *server.Server, name string) {
			n, err := server.ParseName(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Apply(server.Patch{Name: &n}, T0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Servers().Insert(ctx, s, nil, 20); err != nil {
				return err
			}
			rename(s, "after_insert")
			got, err := tx.Servers().Get(ctx, s.ID())
			if err != nil {
				return err
			}
			rename(got, "after_get")
			got, err = tx.Servers().Get(ctx, s.ID())
			if err != nil {
				return err
			}
			if got.Name().String() != "wiki" {
				t.Errorf("stored name %q, want wiki: a caller's change reached the store", got.Name())
			}
			return nil
		})
	})

	t.Run("Update stores what fn made of the stored server and handles the credential", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("old"))
		off := false
		steps := []struct {
			cu   ports.CredentialUpdate
			want []byte
		}{
			{ports.CredentialUpdate{}, []byte("old")},                                             // keep
			{ports.CredentialUpdate{Replace: false, Encrypted: []byte("ignored")}, []byte("old")}, // keep: Replace decides
			{ports.CredentialUpdate{Replace: true, Encrypted: []byte("new")}, []byte("new")},
			{ports.CredentialUpdate{Replace: true}, nil}, // clear
		}
		for i, step := range steps {
			want := h.update(t, tenant, id, func(s *server.Server) (ports.CredentialUpdate, error) {
				if s.ID() != id || s.Name().String() != "wiki" {
					t.Errorf("fn got server %s %q, want the stored one", s.ID(), s.Name())
				}
				if _, err := s.Apply(server.Patch{Enabled: &off}, T0.Add(time.Duration(i+1)*time.Minute)); err != nil {
					return ports.CredentialUpdate{}, err
				}
				s.RecordError(fmt.Sprintf("step_%d", i))
				return step.cu, nil
			})
			h.stored(t, tenant, want, step.want)
		}
	})

	t.Run("Update stores every mutable field", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("old"))
		later := T0.Add(time.Hour)
		want := h.update(t, tenant, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			name, _ := server.ParseName("wiki2")
			u, _ := server.ParseURL("https://wiki2.example.com:8443/mcp")
			c, _ := server.NewHeader("x-api-key", "header-value-1234")
			ack, off, perMinute := true, false, 42
			limit, _ := server.ParseCallLimit(&perMinute)
			if _, err := s.Apply(server.Patch{Name: &name, URL: &u, Credential: &c, Acknowledged: &ack, Enabled: &off, MaxCallsPerMinute: &limit}, later); err != nil {
				return ports.CredentialUpdate{}, err
			}
			if err := s.ReplaceTools([]tool.Snapshot{snapshot(t, "wiki2", "search")}, later); err != nil {
				return ports.CredentialUpdate{}, err
			}
			s.RecordDiscovery(later, "timeout")
			return ports.CredentialUpdate{Replace: true, Encrypted: []byte("new")}, nil
		})
		if n, _ := want.MaxCallsPerMinute().PerMinute(); want.Name().String() != "wiki2" || want.Enabled() || want.CredentialKind() != server.KindHeader ||
			want.LastError() != "timeout" || len(want.Tools()) != 1 || !want.UpdatedAt().Equal(later) || n != 42 {
			t.Errorf("Update returned %+v, want every field changed", want)
		}
		h.stored(t, tenant, want, []byte("new"))
	})

	t.Run("Update stores the tools' states, the server's definitions and the last listing", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("cred"))
		later := T0.Add(time.Hour)
		def := func(name, desc, ann string) tool.Definition {
			d, err := tool.NewDefinition(name, desc,
				[]byte(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`), []byte(ann))
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		search, lookup, fetch := def("search", "Searches.", `{"readOnlyHint":true}`), def("lookup", "Looks up.", ""), def("fetch", "Fetches.", `{"readOnlyHint":true}`)
		var snaps []tool.Snapshot
		for _, d := range []tool.Definition{search, lookup, fetch} {
			sn, err := tool.NewSnapshot("wiki", d, "Admin text.", T0)
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, sn)
		}
		want := h.update(t, tenant, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			if err := s.ReplaceTools(snaps, later); err != nil {
				return ports.CredentialUpdate{}, err
			}
			s.ObserveTools([]server.LiveTool{
				{Name: "search", Definition: def("search", "Searches. Changed.", `{"readOnlyHint":true,"title":"S"}`), Readable: true},
				{Name: "lookup"}, // unreadable
				{Name: "new_tool", Definition: def("new_tool", "New.", ""), Readable: true},
			})
			return ports.CredentialUpdate{}, nil
		})
		if want.ToolStatus("search").State != server.ToolChanged || want.ToolStatus("lookup").State != server.ToolChanged ||
			want.ToolStatus("fetch").State != server.ToolGone || len(want.NewOnServer()) != 1 {
			t.Fatalf("the update made %v %v %v %v", want.ToolStatus("search"), want.ToolStatus("lookup"), want.ToolStatus("fetch"), want.NewOnServer())
		}
		h.stored(t, tenant, want, []byte("cred"))

		// An empty listing is a listing, not none.
		want = h.update(t, tenant, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			s.ObserveTools(nil)
			return ports.CredentialUpdate{}, nil
		})
		if l, ok := want.Listed(); !ok || len(l) != 0 {
			t.Fatalf("after an empty listing: %v %v", l, ok)
		}
		h.stored(t, tenant, want, []byte("cred"))
	})

	t.Run("Update refuses a rename to a used name and stores nothing when fn fails", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("cred"))
		h.seedServer(t, tenant, "jira", nil)
		jira, err := server.ParseName("jira")
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
				_, err := s.Apply(server.Patch{Name: &jira}, T0.Add(time.Hour))
				return ports.CredentialUpdate{Replace: true}, err
			})
			isErr(t, "rename to a used name", err, ports.ErrNameTaken)
			_, err = tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
				s.RecordError("changed")
				return ports.CredentialUpdate{Replace: true}, boom
			})
			isErr(t, "fn's error", err, boom)
			return nil // commit: the refused updates must not be in it
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Servers().Get(ctx, id)
			if err != nil {
				return err
			}
			if got.Name().String() != "wiki" || got.LastError() != "" {
				t.Errorf("after refused updates: name %q, last error %q", got.Name(), got.LastError())
			}
			if enc, err := tx.Servers().Credential(ctx, id); err != nil || string(enc) != "cred" {
				t.Errorf("after refused updates: credential %q, %v", enc, err)
			}
			return nil
		})
	})

	t.Run("Delete removes the server, its credential and its call records, once", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("cred"))
		keep := h.seedServer(t, tenant, "jira", nil)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, sid := range []string{id, keep} {
				if err := tx.Calls().Record(ctx, ports.ToolCall{ServerID: sid, Tool: "search", Status: "ok", CreatedAt: T0}); err != nil {
					return err
				}
			}
			return tx.Servers().Delete(ctx, id)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Get(ctx, id)
			isErr(t, "Get after Delete", err, ports.ErrNotFound)
			_, err = tx.Servers().Credential(ctx, id)
			isErr(t, "Credential after Delete", err, ports.ErrNotFound)
			isErr(t, "second Delete", tx.Servers().Delete(ctx, id), ports.ErrNotFound)
			if calls, err := tx.Calls().Recent(ctx, id, 10); err != nil || len(calls) != 0 {
				t.Errorf("call records of a deleted server: %d, %v", len(calls), err)
			}
			if calls, err := tx.Calls().Recent(ctx, keep, 10); err != nil || len(calls) != 1 {
				t.Errorf("call records of the other server: %d, %v; want 1", len(calls), err)
			}
			// The name is free again.
			return tx.Servers().Insert(ctx, newServer(t, tenant, "wiki"), nil, 20)
		})
	})

	t.Run("ClaimDiscovery grants one claim per interval by the store's clock", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", nil)
		l := ports.ListingDiscovery
		claim := func(interval time.Duration) (bool, time.Duration) {
			t.Helper()
			var ok bool
			var after time.Duration
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				var err error
				ok, after, err = tx.Servers().ClaimDiscovery(ctx, id, interval, l)
				return err
			})
			return ok, after
		}
		before := time.Now()
		if ok, after := claim(time.Hour); !ok || after != 0 {
			t.Fatalf("first claim = %v, %v; want granted", ok, after)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			s, err := tx.Servers().Get(ctx, id)
			if err != nil {
				return err
			}
			if at := s.LastDiscoveryAt(); at.Before(before.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) {
				t.Errorf("LastDiscoveryAt = %v after a claim at %v", at, before)
			}
			return nil
		})
		ok, after := claim(time.Hour)
		if ok || after <= time.Hour-time.Minute || after > time.Hour {
			t.Errorf("claim within the interval = %v, retry after %v; want refused, just under 1h", ok, after)
		}
		if ok, _ := claim(0); !ok {
			t.Error("claim with a zero interval refused")
		}
		time.Sleep(60 * time.Millisecond)
		if ok, after := claim(50 * time.Millisecond); !ok {
			t.Errorf("claim after the interval passed refused (retry after %v)", after)
		}

		// A test's claim shares the interval and leaves lastDiscoveryAt.
		lastDiscovery := func() time.Time {
			t.Helper()
			var at time.Time
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				s, err := tx.Servers().Get(ctx, id)
				at = s.LastDiscoveryAt()
				return err
			})
			return at
		}
		discovered := lastDiscovery()
		l = ports.ListingTest
		if ok, after := claim(time.Hour); ok || after <= time.Hour-time.Minute {
			t.Errorf("a test's claim within a discovery's interval = %v, retry after %v; want refused", ok, after)
		}
		time.Sleep(60 * time.Millisecond)
		if ok, after := claim(50 * time.Millisecond); !ok {
			t.Errorf("a test's claim after the interval passed refused (retry after %v)", after)
		}
		if at := lastDiscovery(); !at.Equal(discovered) {
			t.Errorf("a test's claim moved lastDiscoveryAt from %v to %v", discovered, at)
		}
		l = ports.ListingDiscovery
		if ok, after := claim(time.Hour); ok || after <= time.Hour-time.Minute {
			t.Errorf("a discovery's claim within a test's interval = %v, retry after %v; want refused", ok, after)
		}
		time.Sleep(60 * time.Millisecond)
		if ok, _ := claim(50 * time.Millisecond); !ok || !lastDiscovery().After(discovered) {
			t.Error("a discovery's claim after a test's interval refused, or lastDiscoveryAt not moved")
		}
		// A never-discovered server: its first test holds a discovery off.
		id = h.seedServer(t, tenant, "fresh", nil)
		l = ports.ListingTest
		if ok, after := claim(time.Hour); !ok {
			t.Fatalf("the first test's claim of a new server refused (retry after %v)", after)
		}
		l = ports.ListingDiscovery
		if ok, after := claim(time.Hour); ok || after <= time.Hour-time.Minute {
			t.Errorf("a discovery right after the first test = %v, retry after %v; want refused", ok, after)
		}
		if !lastDiscovery().IsZero() {
			t.Errorf("lastDiscoveryAt = %v after a test's claim only, want zero", lastDiscovery())
		}
	})

	t.Run("ClaimConnectionTest grants max tests per window and tenant by the store's clock", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		claim := func(tenant string, max int, window time.Duration) (bool, time.Duration) {
			t.Helper()
			var ok bool
			var after time.Duration
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				var err error
				ok, after, err = tx.Servers().ClaimConnectionTest(ctx, max, window)
				return err
			})
			return ok, after
		}
		for i := range 3 {
			if ok, after := claim(tenant, 3, time.Hour); !ok || after != 0 {
				t.Fatalf("claim %d of 3 = %v, %v; want granted", i+1, ok, after)
			}
		}
		ok, after := claim(tenant, 3, time.Hour)
		if ok || after <= time.Hour-time.Minute || after > time.Hour {
			t.Errorf("claim over the limit = %v, retry after %v; want refused, just under 1h", ok, after)
		}
		if ok, after := claim(other, 3, time.Hour); !ok {
			t.Errorf("another tenant's first claim refused (retry after %v): the count is per tenant", after)
		}
		if ok, _ := claim(tenant, 4, time.Hour); !ok {
			t.Error("claim under a higher limit refused")
		}
		time.Sleep(60 * time.Millisecond)
		if ok, after := claim(tenant, 1, 50*time.Millisecond); !ok {
			t.Errorf("claim after the window passed refused (retry after %v)", after)
		}
		if ok, after := claim(tenant, 1, 50*time.Millisecond); ok || after <= 0 || after > 50*time.Millisecond {
			t.Errorf("second claim within the short window = %v, retry after %v; want refused within 50ms", ok, after)
		}
	})

	t.Run("Insert and Update store the calls-per-minute limit, Update removes it", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		s := newServer(t, tenant, "wiki")
		most := 600
		limit, err := server.ParseCallLimit(&most)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(server.Patch{MaxCallsPerMinute: &limit}, T0); err != nil {
			t.Fatal(err)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Insert(ctx, s, nil, 20)
		})
		h.stored(t, tenant, s, nil)
		want := h.update(t, tenant, s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
			none := server.NoCallLimit()
			_, err := s.Apply(server.Patch{MaxCallsPerMinute: &none}, T0.Add(time.Hour))
			return ports.CredentialUpdate{}, err
		})
		if _, ok := want.MaxCallsPerMinute().PerMinute(); ok {
			t.Fatal("the limit was not removed")
		}
		h.stored(t, tenant, want, nil)
	})

	t.Run("TakeCall counts a server's calls up to the limit per window of the store's clock", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		a, b := h.seedServer(t, tenant, "wiki", nil), h.seedServer(t, tenant, "docs", nil)
		const window = time.Hour
		for i := range 3 {
			if !h.takeCall(t, tenant, a, 3, window) {
				t.Fatalf("take %d of 3 refused", i+1)
			}
		}
		for range 2 {
			if h.takeCall(t, tenant, a, 3, window) {
				t.Error("a take over the limit granted")
			}
		}
		if !h.takeCall(t, tenant, b, 1, window) {
			t.Error("another server's first take refused: the count is per server")
		}
		if h.takeCall(t, tenant, b, 1, window) {
			t.Error("the other server's second take under 1 granted")
		}
		// The refused takes counted nothing: a higher limit has one more.
		if !h.takeCall(t, tenant, a, 4, window) {
			t.Error("a take under a higher limit refused")
		}
		if h.takeCall(t, tenant, a, 4, window) {
			t.Error("a fifth take under 4 granted")
		}
		if h.takeCall(t, tenant, a, 0, window) {
			t.Error("a take under a limit of 0 granted")
		}
	})

	t.Run("TakeCall starts each window from zero", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", nil)
		const window = 300 * time.Millisecond
		if !h.takeCall(t, tenant, id, 1, window) {
			t.Fatal("the first take refused")
		}
		time.Sleep(window + 50*time.Millisecond) // the next window at the latest
		if !h.takeCall(t, tenant, id, 1, window) {
			t.Error("the first take of a new window refused")
		}
	})

	t.Run("TakeCall of concurrent transactions grants exactly the limit", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", nil)
		const limit, takers = 7, 24
		var (
			mu      sync.Mutex
			granted int
			wg      sync.WaitGroup
		)
		start := make(chan struct{})
		for range takers {
			wg.Go(func() {
				<-start
				err := h.try(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					ok, err := tx.Servers().TakeCall(ctx, id, limit, time.Hour)
					if ok {
						mu.Lock()
						granted++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Errorf("TakeCall: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if granted != limit {
			t.Errorf("%d of %d concurrent takes granted, want %d", granted, takers, limit)
		}
	})

	t.Run("TakeCall does not count a call of another tenant at a server", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", nil)
		if !h.takeCall(t, tenant, id, 2, time.Hour) {
			t.Fatal("the first take refused")
		}
		for range 3 {
			err := h.try(t, other, func(ctx context.Context, tx ports.TenantTx) error {
				ok, err := tx.Servers().TakeCall(ctx, id, 2, time.Hour)
				if ok {
					t.Error("another tenant took a call of the server")
				}
				return err
			})
			isErr(t, "another tenant's TakeCall", err, ports.ErrNotFound)
		}
		if !h.takeCall(t, tenant, id, 2, time.Hour) {
			t.Error("the second take refused: another tenant's counted")
		}
		if h.takeCall(t, tenant, id, 2, time.Hour) {
			t.Error("a third take under 2 granted")
		}
	})
}

// takeCall runs TakeCall in its own transaction of tenant.
func (h Harness) takeCall(t *testing.T, tenant, id string, limit int, window time.Duration) bool {
	t.Helper()
	var ok bool
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		ok, err = tx.Servers().TakeCall(ctx, id, limit, window)
		return err
	})
	return ok
}

// update runs Update with fn in its own transaction and checks that it
// returns the server fn made; it returns that server.
func (h Harness) update(t *testing.T, tenant, id string, fn func(*server.Server) (ports.CredentialUpdate, error)) *server.Server {
	t.Helper()
	var want *server.Server
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			want = s
			return fn(s)
		})
		if err != nil {
			return err
		}
		sameServer(t, got, want)
		return nil
	})
	return want
}

// stored checks, in a new transaction, that Get returns want and
// Credential returns cred.
func (h Harness) stored(t *testing.T, tenant string, want *server.Server, cred []byte) {
	t.Helper()
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Get(ctx, want.ID())
		if err != nil {
			return err
		}
		sameServer(t, got, want)
		if enc, err := tx.Servers().Credential(ctx, want.ID()); err != nil || !bytes.Equal(enc, cred) {
			t.Errorf("credential %q, %v; want %q", enc, err, cred)
		}
		return nil
	})
}

func snapshot(t *testing.T, serverName, toolName string) tool.Snapshot {
	t.Helper()
	d, err := tool.NewDefinition(toolName, "Searches.",
		[]byte(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		[]byte(`{"readOnlyHint":true}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tool.NewSnapshot(serverName, d, "Search the wiki.", T0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameServer compares every field of two servers, times by instant.
func sameServer(t *testing.T, got, want *server.Server) {
	t.Helper()
	v := func(s *server.Server) string {
		out := fmt.Sprintf("%s %s %s %s enabled=%v kind=%s hint=%q err=%q ack=%s disc=%s created=%s updated=%s",
			s.ID(), s.TenantID(), s.Name(), s.URL(), s.Enabled(), s.CredentialKind(), s.CredentialHint(), s.LastError(),
			s.AcknowledgedAt().UTC(), s.LastDiscoveryAt().UTC(), s.CreatedAt().UTC(), s.UpdatedAt().UTC())
		o := s.OAuth()
		out += fmt.Sprintf(" oauth{%q %q %q %q %q %s %q}", o.TokenURL, o.ClientID, o.Scopes, o.Issuer, o.ConnectedBy, o.ConnectedAt.UTC(), o.Refused)
		for _, tl := range s.Tools() {
			out += fmt.Sprintf(" tool{%s %q %s %s %v %s %s}", tl.Name(), tl.Description(), tl.InputSchema(),
				tl.Annotations(), tl.WriteCapable(), tl.Hash(), tl.ApprovedAt().UTC())
			if d, ok := tl.ServerDefinition(); ok {
				out += fmt.Sprintf(" server{%q %s %s}", d.Description(), d.InputSchema(), d.Annotations())
			}
			st := s.ToolStatus(tl.Name())
			out += " " + string(st.State)
			if st.Live != nil {
				out += fmt.Sprintf(" live{%q %s %s %s}", st.Live.Description(), st.Live.InputSchema(), st.Live.Annotations(), tool.Hash(*st.Live))
			}
		}
		listed, ok := s.Listed()
		out += fmt.Sprintf(" listed=%v %q", ok, listed)
		perMinute, limited := s.MaxCallsPerMinute().PerMinute()
		out += fmt.Sprintf(" maxCallsPerMinute=%v %d", limited, perMinute)
		return out
	}
	if g, w := v(got), v(want); g != w {
		t.Errorf("server = %s\nwant     %s", g, w)
	}
}
