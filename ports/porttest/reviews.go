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
// way to see the queue. The transitions themselves are the domain's
// (domain/review's tests); what the store adds is its guard, whatever the
// run it is given says (a stale copy of another attempt): a stored run
// that is done or failed never moves, a queued one is never done, and the
// stored times keep their order when two attempts hold starts of their
// own, read on clocks that disagree.
func ReviewRepo(t *testing.T, open Open) {
	at := func(minute int) time.Time { return T0.Add(time.Duration(minute) * time.Minute) }

	t.Run("Insert stores a queued run, whatever state and result it is given; Get returns it", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		in := newRun(t, NewID(t), repo, review.Request{Title: "Fix it", Description: "Why", Diff: "diff --git a/x b/x\n+1",
			Files: map[string]string{"x.go": "package x", "y.go": ""}}, T0)
		mustDo(t, in.Start(T0))
		mustDo(t, in.Complete(T0, review.Result{PromptVersion: "p1", Summary: "sum", Findings: []review.Finding{{Path: "x.go", Line: 1}}}))
		bare := newRun(t, NewID(t), repo, review.Request{Title: "t", Diff: "+"}, T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Reviews().Insert(ctx, in); err != nil {
				return err
			}
			return tx.Reviews().Insert(ctx, bare)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameRun(t, must(tx.Reviews().Get(ctx, in.ID())), queued(in))
			sameRun(t, must(tx.Reviews().Get(ctx, bare.ID())), queued(bare))
			return nil
		})
	})

	// A repository id that is not a UUID cannot be given: review.NewRun
	// refuses it.
	t.Run("Insert refuses a used id and a repository that is missing or not the tenant's", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		foreign := h.seedRepository(t, other, "acme/api")
		first := newRun(t, NewID(t), repo, review.Request{Title: "first", Diff: "+"}, T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Reviews().Insert(ctx, first); err != nil {
				return err
			}
			again := newRun(t, first.ID(), repo, review.Request{Title: "second", Diff: "+"}, T0)
			isErr(t, "used id", tx.Reviews().Insert(ctx, again), ports.ErrConflict)
			for _, r := range []string{NewID(t), foreign} {
				err := tx.Reviews().Insert(ctx, newRun(t, NewID(t), r, review.Request{Title: "t", Diff: "+"}, T0))
				isErr(t, "repository "+r, err, ports.ErrNotFound)
			}
			sameRun(t, must(tx.Reviews().Get(ctx, first.ID())), queued(first)) // the transaction goes on
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
				return nil
			})
		}
		// Start and Finish take a run, whose id is a UUID: one that is
		// not stored, and the other tenant's.
		for _, id := range []string{NewID(t), foreign} {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				r := newRun(t, id, NewID(t), review.Request{Title: "t", Diff: "+"}, T0)
				mustDo(t, r.Start(at(1)))
				_, err := tx.Reviews().Start(ctx, r)
				isErr(t, "Start "+id, err, ports.ErrNotFound)
				mustDo(t, r.Fail(at(2)))
				isErr(t, "Finish "+id, tx.Reviews().Finish(ctx, r), ports.ErrNotFound)
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if r := must(tx.Reviews().Get(ctx, foreign)); r.Status() != review.Queued || !r.StartedAt().IsZero() {
				t.Errorf("the other tenant's run is %s, started %v; want queued", r.Status(), r.StartedAt())
			}
			return nil
		})
	})

	t.Run("Recent is one repository's runs, newest first, at most limit, without diff and files", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo, repo2 := h.seedRepository(t, tenant, "acme/api"), h.seedRepository(t, tenant, "acme/web")
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
					ids = append(ids, r.ID())
					if r.Diff() != "" || len(r.Files()) != 0 {
						t.Errorf("Recent returned run %s with its diff or files", r.ID())
					}
					if r.Title() != "t" || r.RepositoryID() != repo || r.Status() != review.Queued {
						t.Errorf("Recent returned %s: %q of %s, %s", r.ID(), r.Title(), r.RepositoryID(), r.Status())
					}
				}
				if !reflect.DeepEqual(ids, tc.want) {
					t.Errorf("Recent(%s, %d) = %v, want %v", tc.repo, tc.limit, ids, tc.want)
				}
			}
			return nil
		})
	})

	t.Run("Start stores a started run and returns the start it keeps; a retry keeps the first start; a finished run is ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		id := h.seedReview(t, tenant, repo, T0)
		var want, stale *review.Run
		started := func(ctx context.Context, tx ports.TenantTx, r *review.Run) {
			t.Helper()
			if got := must(tx.Reviews().Start(ctx, r)); !got.Equal(at(1)) {
				t.Errorf("Start returned %v, want the stored start %v", got, at(1))
			}
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			stale = must(tx.Reviews().Get(ctx, id)) // a second attempt that loaded the run queued
			run := must(tx.Reviews().Get(ctx, id))
			mustDo(t, run.Start(at(1)))
			want = run
			started(ctx, tx, run)
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(want))

			retry := must(tx.Reviews().Get(ctx, id)) // a rescued attempt loads it running
			mustDo(t, retry.Start(at(2)))
			started(ctx, tx, retry)
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(want))

			// The stale copy thinks it starts the run at 3: the store
			// keeps the first start all the same, and says so.
			mustDo(t, stale.Start(at(3)))
			started(ctx, tx, stale)
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(want))
			done := must(tx.Reviews().Get(ctx, id))
			mustDo(t, done.Complete(at(4), review.Result{PromptVersion: "v1"}))
			return tx.Reviews().Finish(ctx, done)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			// The stale copy is still running in memory: the store refuses
			// to move the done run.
			_, err := tx.Reviews().Start(ctx, stale)
			isErr(t, "Start of a done run", err, ports.ErrConflict)
			if r := must(tx.Reviews().Get(ctx, id)); r.Status() != review.Done || !r.StartedAt().Equal(at(1)) {
				t.Errorf("after a refused start: %s, started %v", r.Status(), r.StartedAt())
			}
			return nil
		})
	})

	t.Run("Finish stores the result once and never the request; a finished run is ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		repo := h.seedRepository(t, tenant, "acme/api")
		running, never := h.seedReview(t, tenant, repo, T0), h.seedReview(t, tenant, repo, T0)
		prompt := "mcp-v2"
		res := review.Result{PromptVersion: "v7", Summary: "Looks fine.",
			Findings: []review.Finding{{Path: "x.go", Line: 3, Title: "Nil", Body: "b", Evidence: "e"}},
			Stats: review.Stats{Mcp: review.McpStats{Prompt: &prompt, Calls: 4, Bytes: 1000, Blocked: 1, Servers: []review.ServerOutcome{
				{ID: NewID(t), Name: "wiki", Offered: true},
				{ID: NewID(t), Name: "tickets", Reason: review.ServerUnauthorized},
			}}}}
		var want, late *review.Run
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			run := must(tx.Reviews().Get(ctx, running))
			mustDo(t, run.Start(at(1)))
			must(tx.Reviews().Start(ctx, run))
			late = must(tx.Reviews().Get(ctx, running)) // another attempt, running too

			// A run with the same id but another request: only its end is
			// stored.
			result := newRun(t, running, NewID(t), review.Request{Title: "changed", Diff: "changed",
				Files: map[string]string{"changed": ""}}, T0)
			mustDo(t, result.Start(at(1)))
			mustDo(t, result.Complete(at(60), res))
			want = must(tx.Reviews().Get(ctx, running))
			mustDo(t, want.Complete(at(60), res))
			return tx.Reviews().Finish(ctx, result)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameRun(t, must(tx.Reviews().Get(ctx, running)), view(want))
			// The other attempt fails late: the done run keeps its result.
			mustDo(t, late.Fail(at(120)))
			isErr(t, "Finish of a done run", tx.Reviews().Finish(ctx, late), ports.ErrConflict)
			sameRun(t, must(tx.Reviews().Get(ctx, running)), view(want))

			// A run that never started may fail (a job that gave up).
			r := must(tx.Reviews().Get(ctx, never))
			mustDo(t, r.Fail(at(60)))
			if err := tx.Reviews().Finish(ctx, r); err != nil {
				t.Errorf("Finish of a queued run: %v", err)
			}
			sameRun(t, must(tx.Reviews().Get(ctx, never)), view(r))
			if r := must(tx.Reviews().Get(ctx, never)); r.Status() != review.Failed || !r.StartedAt().IsZero() {
				t.Errorf("failed queued run: %s, started %v", r.Status(), r.StartedAt())
			}
			return nil
		})
	})

	// A run is never done without running, whatever the run given says:
	// a done run over a stored queued one is refused (its start was
	// never stored); a failed one is stored, with its start when it has
	// one.
	t.Run("Finish of a done run needs a running stored run; a failed one stores its start when the stored run has none", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			queuedRun := must(tx.Reviews().Get(ctx, id))
			done := must(tx.Reviews().Get(ctx, id))
			mustDo(t, done.Start(at(1)))
			mustDo(t, done.Complete(at(2), review.Result{PromptVersion: "v1", Summary: "never stored"}))
			isErr(t, "Finish of a done run over a queued one", tx.Reviews().Finish(ctx, done), ports.ErrConflict)
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(queuedRun)) // the transaction goes on

			failed := must(tx.Reviews().Get(ctx, id))
			mustDo(t, failed.Start(at(1)))
			mustDo(t, failed.Fail(at(2)))
			mustDo(t, tx.Reviews().Finish(ctx, failed))
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(failed))
			if r := must(tx.Reviews().Get(ctx, id)); !r.StartedAt().Equal(at(1)) {
				t.Errorf("the failed run's start is %v, want %v", r.StartedAt(), at(1))
			}
			return nil
		})
	})

	// Two attempts with clocks that disagree: B reads the run queued
	// (its replica's clock says 1), A starts it first on a clock ahead
	// (5); B's start is not stored, and B's result, at 3 on its own
	// clock, would finish the run before the stored start. Whatever
	// the attempt holds, the stored run keeps its order and loads.
	t.Run("two attempts on skewed clocks: the stored start is returned and the stored finish is never before it", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			// end finishes B's copy, which did or did not take the
			// stored start; want is the stored status.
			take bool
			end  func(*review.Run) error
			want review.RunStatus
		}{
			{"B completes without taking the stored start", false,
				func(r *review.Run) error { return r.Complete(at(3), review.Result{PromptVersion: "v1"}) }, review.Done},
			{"B completes after taking the stored start", true,
				func(r *review.Run) error { return r.Complete(at(3), review.Result{PromptVersion: "v1"}) }, review.Done},
			{"B fails without taking the stored start", false, func(r *review.Run) error { return r.Fail(at(3)) }, review.Failed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h := open(t)
				tenant := h.tenant(t)
				repo := h.seedRepository(t, tenant, "acme/api")
				id := h.seedReview(t, tenant, repo, T0)
				var b *review.Run
				h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					b = must(tx.Reviews().Get(ctx, id)) // B reads the run queued
					return nil
				})
				h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					a := must(tx.Reviews().Get(ctx, id))
					mustDo(t, a.Start(at(5)))
					if got := must(tx.Reviews().Start(ctx, a)); !got.Equal(at(5)) {
						t.Errorf("A's Start returned %v, want %v", got, at(5))
					}
					return nil
				})
				h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					mustDo(t, b.Start(at(1)))
					got := must(tx.Reviews().Start(ctx, b))
					if !got.Equal(at(5)) {
						t.Errorf("B's Start returned %v, want the stored start %v", got, at(5))
					}
					if tc.take {
						mustDo(t, b.TakeStoredStart(got))
					}
					return nil
				})
				mustDo(t, tc.end(b))
				h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					return tx.Reviews().Finish(ctx, b)
				})
				h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
					r := must(tx.Reviews().Get(ctx, id))
					if r.Status() != tc.want || !r.StartedAt().Equal(at(5)) || !r.FinishedAt().Equal(at(5)) {
						t.Errorf("stored: %s, started %v, finished %v; want %s, started and finished at %v",
							r.Status(), r.StartedAt(), r.FinishedAt(), tc.want, at(5))
					}
					if list := must(tx.Reviews().Recent(ctx, repo, 10)); len(list) != 1 || !list[0].FinishedAt().Equal(at(5)) {
						t.Errorf("Recent = %d runs, want the run finished at %v", len(list), at(5))
					}
					return nil
				})
			})
		}
	})

	t.Run("Start refuses a run that is not running, Finish one that is not finished", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			queuedRun := must(tx.Reviews().Get(ctx, id))
			running := must(tx.Reviews().Get(ctx, id))
			mustDo(t, running.Start(at(1)))
			done := must(tx.Reviews().Get(ctx, id))
			mustDo(t, done.Start(at(1)))
			mustDo(t, done.Complete(at(2), review.Result{PromptVersion: "v1"}))
			for _, r := range []*review.Run{queuedRun, done} {
				if _, err := tx.Reviews().Start(ctx, r); err == nil {
					t.Errorf("Start of a %s run succeeded", r.Status())
				}
			}
			for _, r := range []*review.Run{queuedRun, running} {
				if err := tx.Reviews().Finish(ctx, r); err == nil {
					t.Errorf("Finish of a %s run succeeded", r.Status())
				}
			}
			sameRun(t, must(tx.Reviews().Get(ctx, id)), view(queuedRun))
			return nil
		})
	})
}

// newRun is a queued run built by the domain.
func newRun(t *testing.T, id, repositoryID string, req review.Request, createdAt time.Time) *review.Run {
	t.Helper()
	r, err := review.NewRun(id, repositoryID, req, createdAt)
	if err != nil {
		t.Fatalf("review.NewRun: %v", err)
	}
	return r
}

// mustDo fails the test on a transition the domain refused.
func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runView is what a run shows through its getters.
type runView struct {
	ID, RepositoryID                 string
	Status                           review.RunStatus
	Request                          review.Request
	Result                           review.Result
	CreatedAt, StartedAt, FinishedAt time.Time
}

func view(r *review.Run) runView {
	return runView{ID: r.ID(), RepositoryID: r.RepositoryID(), Status: r.Status(), Request: r.Request(), Result: r.Result(),
		CreatedAt: r.CreatedAt(), StartedAt: r.StartedAt(), FinishedAt: r.FinishedAt()}
}

// queued is r as Insert stores it: queued, without a start or a result.
func queued(r *review.Run) runView {
	v := view(r)
	v.Status, v.Result, v.StartedAt, v.FinishedAt = review.Queued, review.Result{}, time.Time{}, time.Time{}
	return v
}

// sameRun compares a run with a view: times by instant, an absent map or
// slice as an empty one.
func sameRun(t *testing.T, got *review.Run, want runView) {
	t.Helper()
	norm := func(v runView) runView {
		for _, tm := range []*time.Time{&v.CreatedAt, &v.StartedAt, &v.FinishedAt} {
			*tm = tm.UTC()
		}
		if len(v.Request.Files) == 0 {
			v.Request.Files = nil
		}
		if len(v.Result.Findings) == 0 {
			v.Result.Findings = nil
		}
		if len(v.Result.Stats.Mcp.Servers) == 0 {
			v.Result.Stats.Mcp.Servers = nil
		}
		return v
	}
	if g, w := norm(view(got)), norm(want); !reflect.DeepEqual(g, w) {
		t.Errorf("run = %+v\nwant  %+v", g, w)
	}
}
