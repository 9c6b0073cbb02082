package porttest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// CallLog is the contract of [ports.CallLog] (uses Tenants and Accounts;
// Servers, Repositories and Reviews to make the rows records point at).
// Callers always give a record its time.
func CallLog(t *testing.T, open Open) {
	t.Run("a record comes back whole (the removed characters too), its duration in whole milliseconds", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		run := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		in := ports.ToolCall{ServerID: srv, ReviewID: run, Tool: "search", Status: "ok",
			Duration: 1234567 * time.Microsecond, RequestBytes: 12, ResponseBytes: 3456,
			ArgumentsHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", RemovedCharacters: 37, CreatedAt: T0}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Calls().Record(ctx, in) })
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			want := in
			want.Duration = 1234 * time.Millisecond
			for _, list := range [][]ports.ToolCall{must(tx.Calls().Recent(ctx, srv, 10)), must(tx.Calls().ForReview(ctx, run, 10))} {
				if len(list) != 1 {
					t.Fatalf("%d records, want 1", len(list))
				}
				sameCall(t, list[0], want)
			}
			return nil
		})
	})

	t.Run("Recent is one server's records, newest first; ForReview one run's, oldest first; both at most limit", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		srv, srv2 := h.seedServer(t, tenant, "wiki", nil), h.seedServer(t, tenant, "jira", nil)
		repo := h.seedRepository(t, tenant, "acme/api")
		run, run2 := h.seedReview(t, tenant, repo, T0), h.seedReview(t, tenant, repo, T0)
		rec := func(server, run, tool string, minute int) ports.ToolCall {
			return ports.ToolCall{ServerID: server, ReviewID: run, Tool: tool, Status: "ok", CreatedAt: T0.Add(time.Duration(minute) * time.Minute)}
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			// Recorded out of time order: the time decides.
			for _, c := range []ports.ToolCall{rec(srv, run, "b", 2), rec(srv, run, "a", 1), rec(srv, "", "d", 4),
				rec(srv2, run, "c", 3), rec(srv, run2, "x", 0), rec(srv, run, "e", 5)} {
				if err := tx.Calls().Record(ctx, c); err != nil {
					return err
				}
			}
			return nil
		})
		otherSrv := h.seedServer(t, other, "wiki", nil)
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Calls().Record(ctx, rec(otherSrv, "", "z", 9)); err != nil {
				return err
			}
			if got := must(tx.Calls().ForReview(ctx, run, 10)); len(got) != 0 {
				t.Errorf("another tenant reads %d records of the run", len(got))
			}
			return nil
		})
		tools := func(list []ports.ToolCall) string {
			s := ""
			for _, c := range list {
				s += c.Tool
			}
			return s
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, c := range []struct {
				what string
				got  []ports.ToolCall
				want string
			}{
				{"Recent(srv, 10)", must(tx.Calls().Recent(ctx, srv, 10)), "edbax"},
				{"Recent(srv, 2)", must(tx.Calls().Recent(ctx, srv, 2)), "ed"},
				{"Recent(srv2, 10)", must(tx.Calls().Recent(ctx, srv2, 10)), "c"},
				{"Recent(srv, 0)", must(tx.Calls().Recent(ctx, srv, 0)), ""},
				{"Recent(other tenant's server)", must(tx.Calls().Recent(ctx, otherSrv, 10)), ""},
				{"Recent(malformed)", must(tx.Calls().Recent(ctx, "not-a-uuid", 10)), ""},
				{"ForReview(run, 10)", must(tx.Calls().ForReview(ctx, run, 10)), "abce"},
				{"ForReview(run, 2)", must(tx.Calls().ForReview(ctx, run, 2)), "ab"},
				{"ForReview(run, 0)", must(tx.Calls().ForReview(ctx, run, 0)), ""},
				{"ForReview(run2, 10)", must(tx.Calls().ForReview(ctx, run2, 10)), "x"},
				{"ForReview(missing)", must(tx.Calls().ForReview(ctx, NewID(t), 10)), ""},
				{"ForReview(malformed)", must(tx.Calls().ForReview(ctx, "not-a-uuid", 10)), ""},
			} {
				if got := tools(c.got); got != c.want {
					t.Errorf("%s = %q, want %q", c.what, got, c.want)
				}
			}
			return nil
		})
	})

	t.Run("ReviewUsage sums one run's records by the budget's rules", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		repo := h.seedRepository(t, tenant, "acme/api")
		run, run2 := h.seedReview(t, tenant, repo, T0), h.seedReview(t, tenant, repo, T0)
		const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		big := limits.CallReservation + 5
		calls := []struct {
			status    review.CallStatus
			hash      string
			response  int
			reviewID  string
			reserved  bool
			sent      bool
			bytes     int
			isBlocked bool
		}{
			{"ok", hash, 100, run, true, true, 100, false},
			{"ok", hash, big, run, true, true, limits.CallReservation, false}, // at most a reservation
			{"ok", "", 7, run, false, true, 7, false},                         // no hash: not reserved
			{"error", hash, 50, run, true, true, 50, false},
			{"error", hash, big, run, true, true, limits.CallReservation, false},
			{"too_large", hash, 10, run, true, true, limits.CallReservation, false}, // a whole reservation
			{"unavailable", hash, 999, run, true, true, 0, false},
			{"blocked", "", 0, run, false, false, 0, true},   // blocked arguments
			{"blocked", hash, 80, run, true, false, 0, true}, // blocked result
			{"budget_exhausted", hash, 0, run, false, false, 0, false},
			{"invalid_arguments", hash, 0, run, true, false, 0, false},
			{"ok", hash, 300, run2, false, false, 0, false},  // another run
			{"blocked", hash, 0, "", false, false, 0, false}, // outside a review
		}
		var want ports.ReviewUsage
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for i, c := range calls {
				err := tx.Calls().Record(ctx, ports.ToolCall{ServerID: srv, ReviewID: c.reviewID, Tool: fmt.Sprint("t", i),
					Status: c.status, ResponseBytes: c.response, ArgumentsHash: c.hash, CreatedAt: T0.Add(time.Duration(i) * time.Second)})
				if err != nil {
					return err
				}
				if c.reserved {
					want.Reserved++
				}
				if c.sent {
					want.Sent++
				}
				if c.isBlocked {
					want.Blocked++
				}
				want.Bytes += c.bytes
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Calls().ReviewUsage(ctx, run)); got != want {
				t.Errorf("ReviewUsage = %+v, want %+v", got, want)
			}
			if got, want := must(tx.Calls().ReviewUsage(ctx, run2)), (ports.ReviewUsage{Sent: 1, Bytes: 300, Reserved: 1}); got != want {
				t.Errorf("ReviewUsage of the other run = %+v, want %+v", got, want)
			}
			for _, id := range []string{NewID(t), "not-a-uuid", ""} {
				if got := must(tx.Calls().ReviewUsage(ctx, id)); got != (ports.ReviewUsage{}) {
					t.Errorf("ReviewUsage(%q) = %+v, want zero", id, got)
				}
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.Calls().ReviewUsage(ctx, run)); got != (ports.ReviewUsage{}) {
				t.Errorf("ReviewUsage of another tenant's run = %+v, want zero", got)
			}
			return nil
		})
	})
}

// must returns v, or panics on err: for reads inside a test transaction,
// where an error is a broken store, not a finding.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func sameCall(t *testing.T, got, want ports.ToolCall) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt)
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("record = %+v\nwant     %+v", got, want)
	}
}
