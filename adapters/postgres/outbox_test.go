package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// streamFixture is a fixture whose tenant transactions write the outbox.
func streamFixture(t *testing.T) fixture {
	t.Helper()
	db := pgtest.New(t)
	db.StreamAudit()
	return fixture{db: db, tenants: postgres.NewTenants(db), accounts: postgres.NewAccounts(db), rotator: postgres.NewRotator(db)}
}

// outboxEntries reads every entry of the outbox, in order.
func outboxEntries(t *testing.T, db *postgres.DB) []struct {
	Tenant, Type string
	At           time.Time
	Data         map[string]any
	Attempts     int
} {
	t.Helper()
	var out []struct {
		Tenant, Type string
		At           time.Time
		Data         map[string]any
		Attempts     int
	}
	err := db.WithSystem(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT tenant_id::text, type, occurred_at, data, attempts FROM audit_outbox ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e struct {
				Tenant, Type string
				At           time.Time
				Data         map[string]any
				Attempts     int
			}
			var data []byte
			if err := rows.Scan(&e.Tenant, &e.Type, &e.At, &data, &e.Attempts); err != nil {
				return err
			}
			if err := json.Unmarshal(data, &e.Data); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOutboxIsWrittenInTheStoringTransaction: with the stream on, every
// audit event and call record a tenant transaction stores is in the
// outbox once that transaction commits, with the stored time and without
// arguments; a transaction that rolls back leaves neither; with the
// stream off, nothing is written.
func TestOutboxIsWrittenInTheStoringTransaction(t *testing.T) {
	for _, stream := range []bool{true, false} {
		f := newFixture(t)
		if stream {
			f = streamFixture(t)
		}
		tenant := f.tenant(t, "acme")
		srv := newServer(t, tenant, "wiki", server.NoCredential())
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Servers().Insert(ctx, srv, nil, 20) })
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Audit().Append(ctx, ports.AuditEvent{Action: "server.update", Actor: "token:abc", Target: srv.ID(),
				Details: map[string]any{"name": "wiki"}}); err != nil {
				return err
			}
			return tx.Calls().Record(ctx, ports.ToolCall{ServerID: srv.ID(), Tool: "search", Status: review.CallOK,
				Duration: 1500 * time.Millisecond, RequestBytes: 10, ResponseBytes: 20, ArgumentsHash: "abc123", RemovedCharacters: 2})
		})
		rollback := errors.New("rolled back")
		err := f.try(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Audit().Append(ctx, ports.AuditEvent{Action: "lost", Actor: "token:abc"}); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatalf("rolled-back transaction: %v", err)
		}
		got := outboxEntries(t, f.db)
		if !stream {
			if len(got) != 0 {
				t.Errorf("stream off: outbox holds %+v", got)
			}
			continue
		}
		if len(got) != 2 {
			t.Fatalf("outbox = %+v, want the audit event and the call record", got)
		}
		var events []ports.AuditEvent
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) (err error) {
			events, err = tx.Audit().Recent(ctx, 10)
			return
		})
		var stored ports.AuditEvent
		for _, e := range events {
			if e.Action == "server.update" {
				stored = e
			}
		}
		a, c := got[0], got[1]
		if a.Tenant != tenant || a.Type != ports.OutboxAudit || !a.At.Equal(stored.At) || a.Data["action"] != "server.update" ||
			a.Data["actor"] != "token:abc" || a.Data["target"] != srv.ID() || a.Data["details"].(map[string]any)["name"] != "wiki" {
			t.Errorf("audit entry %+v, stored event %+v", a, stored)
		}
		if at, _ := time.Parse(time.RFC3339Nano, a.Data["at"].(string)); !at.Equal(stored.At) {
			t.Errorf("audit entry's data at %v, stored %v", a.Data["at"], stored.At)
		}
		want := map[string]any{"serverId": srv.ID(), "tool": "search", "status": "ok", "durationMs": 1500.0, "requestBytes": 10.0,
			"responseBytes": 20.0, "argumentsHash": "abc123", "removedCharacters": 2.0}
		for k, v := range want {
			if c.Data[k] != v {
				t.Errorf("call entry %s = %v, want %v", k, c.Data[k], v)
			}
		}
		if c.Type != ports.OutboxCall || len(c.Data) != len(want)+1 || c.Data["createdAt"] == nil {
			t.Errorf("call entry %+v: want exactly the record's fields and createdAt", c)
		}
	}
}

// TestTenantRoleCannotReadOrChangeTheOutbox: a tenant transaction adds
// entries and does nothing else with them.
func TestTenantRoleCannotReadOrChangeTheOutbox(t *testing.T) {
	f := streamFixture(t)
	tenant := f.tenant(t, "acme")
	for _, q := range []string{"SELECT count(*) FROM audit_outbox", "DELETE FROM audit_outbox", "UPDATE audit_outbox SET attempts = 0"} {
		err := f.db.WithTenant(t.Context(), tenant, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, q)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as the tenant role: %v, want permission denied", q, err)
		}
	}
}

// appendEvents stores n audit events named prefix0… for tenant.
func appendEvents(t *testing.T, f fixture, tenant, prefix string, n int) {
	t.Helper()
	for i := range n {
		f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Audit().Append(ctx, ports.AuditEvent{Action: prefix + string(rune('0'+i)), Actor: "system"})
		})
	}
}

func action(e ports.OutboxEntry) string {
	var d struct{ Action string }
	_ = json.Unmarshal(e.Data, &d)
	return d.Action
}

// TestDrainSendsInOrderAndStopsAtTheFirstFailure: a drain sends a
// tenant's entries in order, deletes those accepted, keeps the refused
// one with its backoff and holds back the rest; the tenant is due again
// only at its next attempt, when the drain goes on from the refused one.
func TestDrainSendsInOrderAndStopsAtTheFirstFailure(t *testing.T) {
	f := streamFixture(t)
	ctx := t.Context()
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	appendEvents(t, f, a, "a", 5)
	appendEvents(t, f, b, "b", 2)
	outbox := postgres.NewAuditOutbox(f.db)
	now := time.Now()

	due, err := outbox.DueTenants(ctx, now, 10)
	if err != nil || len(due) != 2 || due[0] != a || due[1] != b {
		t.Fatalf("DueTenants = %v, %v; want [a b] in the order of their first entry", due, err)
	}

	var sent []string
	refused := errors.New("audit webhook: answered 503")
	retryAt := now.Add(time.Minute)
	drain := ports.OutboxDrain{Now: now, Limit: 10, RetryAt: func(attempts int) time.Time {
		if attempts != 1 {
			t.Errorf("RetryAt(%d), want the first failure", attempts)
		}
		return retryAt
	}, Send: func(_ context.Context, e ports.OutboxEntry) error {
		if e.TenantID != a {
			t.Errorf("drain of a sent an entry of %s", e.TenantID)
		}
		sent = append(sent, action(e))
		if len(sent) == 3 {
			return refused
		}
		return nil
	}}
	n, err := outbox.Drain(ctx, a, drain)
	if n != 2 || !errors.Is(err, refused) || strings.Join(sent, ",") != "a0,a1,a2" {
		t.Fatalf("Drain = %d, %v, sent %v; want a0 a1 accepted, a2 refused, nothing after", n, err, sent)
	}
	left := outboxEntries(t, f.db)
	var names []string
	for _, e := range left {
		names = append(names, e.Data["action"].(string))
		if e.Data["action"] == "a2" && e.Attempts != 1 {
			t.Errorf("refused entry has %d attempts, want 1", e.Attempts)
		}
	}
	if strings.Join(names, ",") != "a2,a3,a4,b0,b1" {
		t.Errorf("outbox after the drain = %v", names)
	}

	due, err = outbox.DueTenants(ctx, now, 10)
	if err != nil || len(due) != 1 || due[0] != b {
		t.Errorf("DueTenants before a's next attempt = %v, %v; want [b]", due, err)
	}
	sent = nil
	if n, err := outbox.Drain(ctx, a, drain); n != 0 || err != nil || sent != nil {
		t.Errorf("Drain before the next attempt = %d, %v, sent %v; want nothing", n, err, sent)
	}

	later := drain
	later.Now = retryAt
	later.Send = func(_ context.Context, e ports.OutboxEntry) error {
		sent = append(sent, action(e))
		if action(e) == "a2" && e.Attempts != 1 {
			t.Errorf("a2 resent with attempts %d, want 1", e.Attempts)
		}
		return nil
	}
	if n, err := outbox.Drain(ctx, a, later); n != 3 || err != nil || strings.Join(sent, ",") != "a2,a3,a4" {
		t.Errorf("Drain at the next attempt = %d, %v, sent %v; want a2 a3 a4", n, err, sent)
	}
	if count, oldest, err := outbox.Backlog(ctx); count != 2 || oldest.IsZero() || err != nil {
		t.Errorf("Backlog = %d, %v, %v; want b's 2 entries", count, oldest, err)
	}
}

// TestDrainLimitAndEmptyBacklog: a drain sends at most its limit; an
// empty outbox has no backlog.
func TestDrainLimitAndEmptyBacklog(t *testing.T) {
	f := streamFixture(t)
	ctx := t.Context()
	a := f.tenant(t, "a")
	outbox := postgres.NewAuditOutbox(f.db)
	if n, oldest, err := outbox.Backlog(ctx); n != 0 || !oldest.IsZero() || err != nil {
		t.Errorf("empty Backlog = %d, %v, %v", n, oldest, err)
	}
	appendEvents(t, f, a, "a", 3)
	var sent int
	d := ports.OutboxDrain{Now: time.Now(), Limit: 2, RetryAt: func(int) time.Time { return time.Now() }, Send: func(context.Context, ports.OutboxEntry) error { sent++; return nil }}
	if n, err := outbox.Drain(ctx, a, d); n != 2 || err != nil || sent != 2 {
		t.Errorf("Drain with limit 2 = %d, %v (sent %d)", n, err, sent)
	}
	if n, err := outbox.Drain(ctx, "not-a-uuid", d); n != 0 || err != nil {
		t.Errorf("Drain of a non-UUID = %d, %v", n, err)
	}
}

// TestConcurrentDrainsOfOneTenantDoNotOverlap: while one drain of a
// tenant is sending, another sends nothing, so entries leave in order
// whatever the number of workers.
func TestConcurrentDrainsOfOneTenantDoNotOverlap(t *testing.T) {
	f := streamFixture(t)
	ctx := t.Context()
	a := f.tenant(t, "a")
	appendEvents(t, f, a, "a", 2)
	outbox := postgres.NewAuditOutbox(f.db)
	inSend, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first := ports.OutboxDrain{Now: time.Now(), Limit: 10, RetryAt: func(int) time.Time { return time.Now() }, Send: func(context.Context, ports.OutboxEntry) error {
		once.Do(func() { close(inSend) })
		<-release
		return nil
	}}
	done := make(chan error)
	go func() { _, err := outbox.Drain(ctx, a, first); done <- err }()
	select {
	case <-inSend:
	case err := <-done:
		t.Fatalf("the first drain sent nothing: %v", err)
	}
	second := first
	second.Send = func(context.Context, ports.OutboxEntry) error {
		t.Error("a second drain sent while the first held the tenant")
		return nil
	}
	if n, err := outbox.Drain(ctx, a, second); n != 0 || err != nil {
		t.Errorf("second Drain = %d, %v; want 0, nil", n, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if left := outboxEntries(t, f.db); len(left) != 0 {
		t.Errorf("outbox after the first drain: %+v", left)
	}
}
