package porttest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// PromptLogRepo is the contract of [ports.PromptLogRepo] (uses Tenants and
// Accounts; Repositories and Reviews to make the runs logs belong to).
func PromptLogRepo(t *testing.T, open Open) {
	t.Run("List returns a run's logs that expire after now, in the order written, whole", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		review, review2 := h.seedReview(t, tenant, repo, T0), h.seedReview(t, tenant, repo, T0)
		now := T0.Add(time.Hour)
		log := func(review, step string, turn int, created, expires time.Time) ports.PromptLog {
			return ports.PromptLog{ReviewID: review, Step: step, Turn: turn, Sealed: []byte(fmt.Sprintf("k1|%s|%d\x00\xff", step, turn)),
				CreatedAt: created, ExpiresAt: expires}
		}
		// Written out of time order: the order of writing decides.
		logs := []ports.PromptLog{
			log(review, ports.StepVerifier, 1, T0.Add(2*time.Minute), now.Add(time.Hour)),
			log(review, ports.StepFinder, 1, T0.Add(time.Minute), now.Add(time.Microsecond)),
			log(review, ports.StepFinder, 2, T0, now),                    // expires at now: gone
			log(review, ports.StepSummary, 1, T0, now.Add(-time.Minute)), // expired
			log(review2, ports.StepFinder, 1, T0, now.Add(time.Hour)),    // another run
			log(review, ports.StepSummary, 2, T0.Add(3*time.Minute), now.Add(24*time.Hour)),
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, l := range logs {
				if err := tx.PromptLogs().Insert(ctx, l); err != nil {
					return err
				}
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got := must(tx.PromptLogs().List(ctx, review, now))
			want := []ports.PromptLog{logs[0], logs[1], logs[5]}
			if len(got) != len(want) {
				t.Fatalf("List = %d logs, want %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.ReviewID != w.ReviewID || g.Step != w.Step || g.Turn != w.Turn || !bytes.Equal(g.Sealed, w.Sealed) ||
					!g.CreatedAt.Equal(w.CreatedAt) || !g.ExpiresAt.Equal(w.ExpiresAt) {
					t.Errorf("log %d = %+v, want %+v", i, g, w)
				}
			}
			if got := must(tx.PromptLogs().List(ctx, review, T0)); len(got) != 5 {
				t.Errorf("List at an earlier time = %d logs, want 5", len(got))
			}
			for _, id := range []string{NewID(t), "not-a-uuid", ""} {
				if got := must(tx.PromptLogs().List(ctx, id, now)); len(got) != 0 {
					t.Errorf("List(%q) = %d logs, want none", id, len(got))
				}
			}
			return nil
		})
	})

	t.Run("Insert refuses a run that is missing or not the tenant's", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		foreign := h.seedReview(t, other, h.seedRepository(t, other, "acme/api"), T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, id := range []string{NewID(t), "not-a-uuid", foreign} {
				err := tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: id, Step: ports.StepFinder, Turn: 1,
					Sealed: []byte("x"), CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)})
				isErr(t, "Insert for run "+id, err, ports.ErrNotFound)
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.PromptLogs().List(ctx, foreign, T0)); len(got) != 0 {
				t.Errorf("the other tenant's run has %d logs", len(got))
			}
			return nil
		})
	})

	t.Run("DeleteAll deletes and counts the tenant's logs, expired ones too, and nothing else", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		review := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		theirs := h.seedReview(t, other, h.seedRepository(t, other, "acme/api"), T0)
		insert := func(tenant, review string, n int) {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				for i := range n {
					err := tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: review, Step: ports.StepFinder, Turn: i + 1,
						Sealed: []byte("x"), CreatedAt: T0, ExpiresAt: T0.Add(time.Duration(i+1) * time.Hour)})
					if err != nil {
						return err
					}
				}
				return nil
			})
		}
		insert(tenant, review, 3)
		insert(other, theirs, 2)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if n := must(tx.PromptLogs().DeleteAll(ctx)); n != 3 {
				t.Errorf("DeleteAll = %d, want 3", n)
			}
			if n := must(tx.PromptLogs().DeleteAll(ctx)); n != 0 {
				t.Errorf("second DeleteAll = %d, want 0", n)
			}
			if got := must(tx.PromptLogs().List(ctx, review, T0)); len(got) != 0 {
				t.Errorf("%d logs left after DeleteAll", len(got))
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if got := must(tx.PromptLogs().List(ctx, theirs, T0)); len(got) != 2 {
				t.Errorf("the other tenant has %d logs, want 2", len(got))
			}
			return nil
		})
	})
}
