package porttest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// AuditLog is the contract of [ports.AuditLog] (uses Tenants and
// Accounts). Callers always give an event its time.
func AuditLog(t *testing.T, open Open) {
	t.Run("Recent is newest first by time, insertion order reversed on a tie, at most limit, per tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		ev := func(action string, minute int) ports.AuditEvent {
			return ports.AuditEvent{Action: action, Actor: "token:x", Target: "t", At: T0.Add(time.Duration(minute) * time.Minute)}
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			// Appended out of time order: the time decides, not the order.
			for _, e := range []ports.AuditEvent{ev("b", 2), ev("a", 1), ev("d", 3), ev("c", 2), ev("e", 3)} {
				if err := tx.Audit().Append(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error { return tx.Audit().Append(ctx, ev("z", 9)) })
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, c := range []struct {
				limit int
				want  string
			}{{10, "edcba"}, {5, "edcba"}, {2, "ed"}, {0, ""}, {-1, ""}} {
				got, err := tx.Audit().Recent(ctx, c.limit)
				if err != nil {
					return err
				}
				actions := ""
				for _, e := range got {
					actions += e.Action
				}
				if actions != c.want {
					t.Errorf("Recent(%d) = %q, want %q", c.limit, actions, c.want)
				}
			}
			return nil
		})
	})

	t.Run("an event comes back whole, its details as JSON decodes them", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		in := ports.AuditEvent{Action: "server.create", Actor: "token:abc", Target: "server:1", At: T0,
			Details: map[string]any{"name": "wiki", "count": 3, "ok": true, "fields": []string{"name", "url"},
				"nested": map[string]any{"k": "v"}}}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Audit().Append(ctx, in); err != nil {
				return err
			}
			return tx.Audit().Append(ctx, ports.AuditEvent{Action: "bare", Actor: "system", At: T0.Add(time.Second)})
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Audit().Recent(ctx, 10)
			if err != nil || len(got) != 2 {
				t.Fatalf("Recent = %d events, %v", len(got), err)
			}
			if got[0].Action != "bare" || got[0].Target != "" || len(got[0].Details) != 0 {
				t.Errorf("event without details = %+v", got[0])
			}
			e := got[1]
			if e.Action != in.Action || e.Actor != in.Actor || e.Target != in.Target || !e.At.Equal(in.At) {
				t.Errorf("event = %+v, want %+v", e, in)
			}
			want := map[string]any{"name": "wiki", "count": float64(3), "ok": true, "fields": []any{"name", "url"},
				"nested": map[string]any{"k": "v"}}
			if !reflect.DeepEqual(e.Details, want) {
				t.Errorf("details = %s, want %s", fmt.Sprintf("%#v", e.Details), fmt.Sprintf("%#v", want))
			}
			return nil
		})
	})
}
