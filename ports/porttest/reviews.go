package porttest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// ReviewRepo is the contract of [ports.ReviewRepo] (uses Tenants and
// Accounts; Repositories to make the rows runs point at). That Insert
// also enqueues the run's job is the adapter's own test: the port has no
// way to see the queue.
func ReviewRepo(t *testing.T, open Open) {
	t.Run("Insert stores a queued run, whatever status and result it is given; Get returns it", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		in := ports.ReviewRun{ID: NewID(t), RepositoryID: repo, Status: review.Done, Title: "Fix it",
			Description: "Why", Diff: "diff --git a/x b/x\n+1", Files: map[string]string{"x.go": "package x", "y.go": ""},
			CreatedAt: T0, PromptVersion: "p1", Summary: "sum", Findings: []review.Finding{{Path: "x.go", Line: 1}},
			StartedAt: T0, FinishedAt: T0}
		bare := ports.ReviewRun{ID: NewID(t), RepositoryID: repo, CreatedAt: T0}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Reviews().Insert(ctx, in); err != nil {
				return err
			}
			return tx.Reviews().Insert(ctx, bare)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			want := queued(in)
			sameRun(t, must(tx.Reviews().Get(ctx, in.ID)), want)
			sameRun(t, must(tx.Reviews().Get(ctx, bare.ID)), queued(bare))
			return nil
		})
	})

	t.Run("Insert refuses a used id and a repository that is missing or not the tenant's", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		foreign := h.seedRepository(t, other, "acme/api")
		first := ports.ReviewRun{ID: NewID(t), RepositoryID: repo, Title: "first", CreatedAt: T0}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Reviews().Insert(ctx, first); err != nil {
				return err
			}
			again := ports.ReviewRun{ID: first.ID, RepositoryID: repo, Title: "second", CreatedAt: T0}
			isErr(t, "used id", tx.Reviews().Insert(ctx, again), ports.ErrConflict)
			for _, r := range []string{NewID(t), "not-a-uuid", foreign} {
				err := tx.Reviews().Insert(ctx, ports.ReviewRun{ID: NewID(t), RepositoryID: r, CreatedAt: T0})
				isErr(t, "repository "+r, err, ports.ErrNotFound)
			}
			sameRun(t, must(tx.Reviews().Get(ctx, first.ID)), queued(first)) // the transaction goes on
			if list := must(tx.Reviews().Recent(ctx, repo, 10)); len(list) != 1 {
				t.Errorf("%d runs after refused inserts, want 1", len(list))
			}
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if list := must(tx.Reviews().Recent(ctx, foreign, 10)); len(list) != 0 {
				t.Errorf("the other tenant's repository has %d runs", len(list))
			}
			return nil
		})
	})

	t.Run("a missing, malformed or other tenant's run is ErrNotFound", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		foreign := h.seedReview(t, other, h.seedRepository(t, other, "acme/api"), T0)
		for _, id := range []string{NewID(t), "not-a-uuid", "", foreign} {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				_, err := tx.Reviews().Get(ctx, id)
				isErr(t, "Get "+id, err, ports.ErrNotFound)
				_, err = tx.Reviews().Start(ctx, id, T0)
				isErr(t, "Start "+id, err, ports.ErrNotFound)
				err = tx.Reviews().Finish(ctx, ports.ReviewRun{ID: id, Status: review.Failed, FinishedAt: T0})
				isErr(t, "Finish "+id, err, ports.ErrNotFound)
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if r := must(tx.Reviews().Get(ctx, foreign)); r.Status != review.Queued {
				t.Errorf("the other tenant's run is %s, want queued", r.Status)
			}
			return nil
		})
	})

	t.Run("Recent is one repository's runs, newest first, at most limit, without diff and files", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo, repo2 := h.seedRepository(t, tenant, "acme/api"), h.seedRepository(t, tenant, "acme/web")
		at := func(minute int) time.Time { return T0.Add(time.Duration(minute) * time.Minute) }
		// Inserted out of time order: the time decides.
		b, a, c := h.seedReview(t, tenant, repo, at(2)), h.seedReview(t, tenant, repo, at(1)), h.seedReview(t, tenant, repo, at(3))
		h.seedReview(t, tenant, repo2, at(4))
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, tc := range []struct {
				repo  string
				limit int
				want  []string
			}{
				{repo, 10, []string{c, b, a}},
				{repo, 2, []string{c, b}},
				{repo, 0, nil},
				{NewID(t), 10, nil},
				{"not-a-uuid", 10, nil},
			} {
				list := must(tx.Reviews().Recent(ctx, tc.repo, tc.limit))
				var ids []string
				for _, r := range list {
					ids = append(ids, r.ID)
					if r.Diff != "" || len(r.Files) != 0 {
						t.Errorf("Recent returned run %s with its diff or files", r.ID)
					}
					if r.Title != "t" || r.RepositoryID != repo || r.Status != review.Queued {
						t.Errorf("Recent returned %+v", r)
					}
				}
				if !reflect.DeepEqual(ids, tc.want) {
					t.Errorf("Recent(%s, %d) = %v, want %v", tc.repo, tc.limit, ids, tc.want)
				}
			}
			return nil
		})
	})

	t.Run("Start runs a queued run; a retry keeps the first start; a finished run is ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		id := h.seedReview(t, tenant, repo, T0)
		var want ports.ReviewRun
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			want = must(tx.Reviews().Get(ctx, id))
			want.Status, want.StartedAt = review.Running, T0.Add(time.Minute)
			sameRun(t, must(tx.Reviews().Start(ctx, id, T0.Add(time.Minute))), want)
			sameRun(t, must(tx.Reviews().Start(ctx, id, T0.Add(2*time.Minute))), want) // retry
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameRun(t, must(tx.Reviews().Get(ctx, id)), want)
			return tx.Reviews().Finish(ctx, ports.ReviewRun{ID: id, Status: review.Done, FinishedAt: T0.Add(3 * time.Minute)})
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Reviews().Start(ctx, id, T0.Add(4*time.Minute))
			isErr(t, "Start of a done run", err, ports.ErrConflict)
			if r := must(tx.Reviews().Get(ctx, id)); r.Status != review.Done || !r.StartedAt.Equal(want.StartedAt) {
				t.Errorf("after a refused start: %s, started %v", r.Status, r.StartedAt)
			}
			return nil
		})
	})

	t.Run("Finish stores the result once and keeps the request; a finished run is ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		running, never := h.seedReview(t, tenant, repo, T0), h.seedReview(t, tenant, repo, T0)
		prompt := "mcp-v2"
		result := ports.ReviewRun{ID: running, Status: review.Done, PromptVersion: "v7", Summary: "Looks fine.",
			Findings: []review.Finding{{Path: "x.go", Line: 3, Title: "Nil", Body: "b", Evidence: "e"}},
			Stats: review.Stats{Mcp: review.McpStats{Prompt: &prompt, Calls: 4, Bytes: 1000, Blocked: 1, Servers: []review.ServerOutcome{
				{ID: NewID(t), Name: "wiki", Offered: true},
				{ID: NewID(t), Name: "tickets", Reason: review.ServerUnauthorized},
			}}},
			FinishedAt: T0.Add(time.Hour),
			// Request fields in a result are not stored.
			Title: "changed", Diff: "changed", Files: map[string]string{"changed": ""}, RepositoryID: NewID(t)}
		var want ports.ReviewRun
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			want = must(tx.Reviews().Start(ctx, running, T0.Add(time.Minute)))
			return tx.Reviews().Finish(ctx, result)
		})
		want.Status, want.PromptVersion, want.Summary, want.Findings, want.Stats, want.FinishedAt =
			result.Status, result.PromptVersion, result.Summary, result.Findings, result.Stats, result.FinishedAt
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameRun(t, must(tx.Reviews().Get(ctx, running)), want)
			late := ports.ReviewRun{ID: running, Status: review.Failed, Summary: "late", FinishedAt: T0.Add(2 * time.Hour)}
			isErr(t, "Finish of a done run", tx.Reviews().Finish(ctx, late), ports.ErrConflict)
			sameRun(t, must(tx.Reviews().Get(ctx, running)), want)

			// A run that never started may fail (a job that gave up).
			if err := tx.Reviews().Finish(ctx, ports.ReviewRun{ID: never, Status: review.Failed, FinishedAt: T0.Add(time.Hour)}); err != nil {
				t.Errorf("Finish of a queued run: %v", err)
			}
			if r := must(tx.Reviews().Get(ctx, never)); r.Status != review.Failed || !r.StartedAt.IsZero() {
				t.Errorf("failed queued run: %s, started %v", r.Status, r.StartedAt)
			}
			return nil
		})
	})

	t.Run("Finish refuses a status other than done or failed", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, s := range []review.RunStatus{review.Queued, review.Running, "", "cancelled"} {
				if err := tx.Reviews().Finish(ctx, ports.ReviewRun{ID: id, Status: s, FinishedAt: T0}); err == nil {
					t.Errorf("Finish with status %q succeeded", s)
				}
			}
			if r := must(tx.Reviews().Get(ctx, id)); r.Status != review.Queued || !r.FinishedAt.IsZero() {
				t.Errorf("after refused finishes: %s, finished %v", r.Status, r.FinishedAt)
			}
			return nil
		})
	})
}

// queued is r as Insert stores it: queued, without a result.
func queued(r ports.ReviewRun) ports.ReviewRun {
	return ports.ReviewRun{ID: r.ID, RepositoryID: r.RepositoryID, Status: review.Queued, Title: r.Title,
		Description: r.Description, Diff: r.Diff, Files: r.Files, CreatedAt: r.CreatedAt}
}

// sameRun compares two runs: times by instant, an absent map or slice as
// an empty one.
func sameRun(t *testing.T, got, want ports.ReviewRun) {
	t.Helper()
	norm := func(r ports.ReviewRun) ports.ReviewRun {
		for _, tm := range []*time.Time{&r.CreatedAt, &r.StartedAt, &r.FinishedAt} {
			*tm = tm.UTC()
		}
		if len(r.Files) == 0 {
			r.Files = nil
		}
		if len(r.Findings) == 0 {
			r.Findings = nil
		}
		return r
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Errorf("run = %+v\nwant  %+v", g, w)
	}
}
