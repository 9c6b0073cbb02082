package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// newRepository stores a private repository in tenant and returns its id.
func (f fixture) newRepository(t *testing.T, tenant string) string {
	t.Helper()
	id := newID(t)
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return insertRepository(ctx, tx, id, "acme/"+id[:8], policy.VisibilityPrivate)
	})
	return id
}

// runCreated is when newRun's runs are submitted.
var runCreated = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func newRun(t *testing.T, repo string) *review.Run {
	t.Helper()
	r, err := review.NewRun(newID(t), repo, review.Request{Title: "Add cache", Description: "why",
		Diff:  "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n",
		Files: map[string]string{"a.go": "package a\n"}}, runCreated)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// jobRow is what the tests read of a river_job row, as the owner.
type jobRow struct {
	Kind        string
	Args        map[string]any
	State       string
	MaxAttempts int
}

func jobsOfReview(t *testing.T, db *postgres.DB, reviewID string) []jobRow {
	t.Helper()
	rows, err := db.Bun().QueryContext(t.Context(),
		"SELECT kind, args, state, max_attempts FROM river_job WHERE args ->> 'reviewId' = ?", reviewID)
	if err != nil {
		t.Fatalf("read river_job: %v", err)
	}
	defer rows.Close()
	var out []jobRow
	for rows.Next() {
		var j jobRow
		var args []byte
		if err := rows.Scan(&j.Kind, &args, &j.State, &j.MaxAttempts); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(args, &j.Args); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func runExists(t *testing.T, db *postgres.DB, id string) bool {
	t.Helper()
	var n int
	if err := pgtest.Superuser(t, db).Bun().NewRaw("SELECT count(*) FROM review_runs WHERE id = ?", id).Scan(t.Context(), &n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestReviewInsertEnqueuesInTheSameTransaction(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	repo := f.newRepository(t, a)

	t.Run("rolled back: neither run nor job", func(t *testing.T) {
		run := newRun(t, repo)
		errBoom := errors.New("boom")
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Reviews().Insert(ctx, run); err != nil {
				return err
			}
			if n := len(jobsOfReview(t, f.db, run.ID())); n != 0 {
				t.Errorf("job visible outside the transaction before commit: %d rows", n)
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InTenant = %v, want %v", err, errBoom)
		}
		if runExists(t, f.db, run.ID()) {
			t.Error("run stored after rollback")
		}
		if jobs := jobsOfReview(t, f.db, run.ID()); len(jobs) != 0 {
			t.Errorf("jobs after rollback: %+v, want none", jobs)
		}
	})

	t.Run("committed: both, the job carrying ids only", func(t *testing.T) {
		run := newRun(t, repo)
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Reviews().Insert(ctx, run)
		})
		if !runExists(t, f.db, run.ID()) {
			t.Error("run missing after commit")
		}
		want := []jobRow{{
			Kind: postgres.ReviewJobKind, Args: map[string]any{"tenantId": a, "reviewId": run.ID()},
			State: "available", MaxAttempts: postgres.ReviewJobMaxAttempts,
		}}
		if diff := cmp.Diff(want, jobsOfReview(t, f.db, run.ID())); diff != "" {
			t.Errorf("jobs after commit (-want +got):\n%s", diff)
		}
	})

	t.Run("a failed enqueue rolls the run back", func(t *testing.T) {
		// The run is stored, then the job insert fails: InTenant must not
		// commit a run without its job.
		if _, err := f.db.Bun().ExecContext(t.Context(), "REVOKE USAGE ON SEQUENCE river_job_id_seq FROM "+postgres.TenantRole); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = f.db.Bun().ExecContext(context.Background(), "GRANT USAGE ON SEQUENCE river_job_id_seq TO "+postgres.TenantRole)
		})
		run := newRun(t, repo)
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Reviews().Insert(ctx, run)
		})
		if err == nil {
			t.Fatal("Insert without the sequence grant succeeded, want an error")
		}
		if runExists(t, f.db, run.ID()) {
			t.Error("run stored although its job was not")
		}
	})
}

func TestReviewRepo(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	repoA := f.newRepository(t, a)
	run := newRun(t, repoA)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Insert(ctx, run)
	})
	// view is what the tests compare of a run.
	type view struct {
		ID, RepositoryID                 string
		Status                           review.RunStatus
		Request                          review.Request
		Result                           review.Result
		CreatedAt, StartedAt, FinishedAt time.Time
	}
	viewOf := func(r *review.Run) view {
		return view{r.ID(), r.RepositoryID(), r.Status(), r.Request(), r.Result(), r.CreatedAt().UTC(), r.StartedAt().UTC(), r.FinishedAt().UTC()}
	}

	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, run.ID())
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(viewOf(run), viewOf(got)); diff != "" {
			t.Errorf("Get after Insert (-want +got):\n%s", diff)
		}
		if err := tx.Reviews().Insert(ctx, run); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Insert of a used id = %v, want ErrConflict", err)
		}
		if err := tx.Reviews().Insert(ctx, newRun(t, newID(t))); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Insert for a missing repository = %v, want ErrNotFound", err)
		}
		return nil
	})

	first := runCreated.Add(time.Hour)
	var started *review.Run
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, run.ID())
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if err := got.Start(first); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Reviews().Start(ctx, got); err != nil {
			t.Errorf("Start: %v", err)
		}
		// A retry starts a running run again and keeps the first start.
		retry, err := tx.Reviews().Get(ctx, run.ID())
		if err != nil || retry.Status() != review.Running || !retry.StartedAt().Equal(first) {
			t.Fatalf("after Start: %v, %v", retry, err)
		}
		if err := retry.Start(first.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Reviews().Start(ctx, retry); err != nil {
			t.Errorf("Start again: %v", err)
		}
		started, err = tx.Reviews().Get(ctx, run.ID())
		if err != nil || started.Status() != review.Running || !started.StartedAt().Equal(first) {
			t.Errorf("Start again = %s at %v, %v; want running at %v", started.Status(), started.StartedAt(), err, first)
		}
		if started.Diff() != run.Diff() || started.Files()["a.go"] != run.Files()["a.go"] {
			t.Errorf("the started run has diff %q files %v, want the stored request", started.Diff(), started.Files())
		}
		return nil
	})

	prompt := "mcp-v1"
	stale := *started // another attempt's copy
	done := started
	if err := done.Complete(first.Add(2*time.Minute), review.Result{PromptVersion: "review-v1.5", Summary: "One paragraph.",
		Findings: []review.Finding{{Path: "a.go", Line: 1, Title: "t", Body: "b", Evidence: "+y"}},
		Stats:    review.Stats{Mcp: review.McpStats{Prompt: &prompt, Calls: 2, Bytes: 300, Blocked: 1}}}); err != nil {
		t.Fatal(err)
	}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Finish(ctx, done)
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, run.ID())
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(viewOf(done), viewOf(got)); diff != "" {
			t.Errorf("Get after Finish (-want +got):\n%s", diff)
		}

		// Finished runs are final, whatever a stale copy says: the
		// update's guard refuses them.
		if _, err := tx.Reviews().Start(ctx, &stale); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Start of a done run = %v, want ErrConflict", err)
		}
		if err := stale.Fail(first.Add(3 * time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := tx.Reviews().Finish(ctx, &stale); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Finish of a done run = %v, want ErrConflict", err)
		}
		if err := tx.Reviews().Finish(ctx, run); err == nil {
			t.Error("Finish of a queued run succeeded, want an error")
		}
		return nil
	})

	// A run that never ran fails with zero stats and no MCP prompt.
	plain := newRun(t, repoA)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Reviews().Insert(ctx, plain); err != nil {
			return err
		}
		if err := plain.Fail(runCreated.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		return tx.Reviews().Finish(ctx, plain)
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, plain.ID())
		if err != nil {
			return err
		}
		if diff := cmp.Diff(viewOf(plain), viewOf(got)); diff != "" || got.Status() != review.Failed || !got.StartedAt().IsZero() {
			t.Errorf("failed run (-want +got):\n%s", diff)
		}
		return nil
	})
	// The stored stats keep the JSON keys every reader of the column knows.
	var stored string
	if err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT stats::text FROM review_runs WHERE id = ?", plain.ID()).Scan(ctx, &stored)
	}); err != nil || stored != `{"mcp": {"bytes": 0, "calls": 0, "prompt": null, "blocked": 0}}` {
		t.Errorf("stored stats = %s, %v", stored, err)
	}

	// Tenant B sees none of A's runs, whatever it does.
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		for _, id := range []string{run.ID(), plain.ID(), newID(t), "nope", ""} {
			if _, err := tx.Reviews().Get(ctx, id); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Get(%q) = %v, want ErrNotFound", id, err)
			}
		}
		for _, r := range []*review.Run{run, plain} {
			foreign := *r
			if r.Status() == review.Queued {
				if err := foreign.Start(time.Now()); err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Reviews().Start(ctx, &foreign); !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("B Start(%s) = %v, want ErrNotFound", r.ID(), err)
				}
				if err := foreign.Fail(time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Reviews().Finish(ctx, &foreign); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Finish(%s) = %v, want ErrNotFound", r.ID(), err)
			}
		}
		// Nor can it review A's repository.
		if err := tx.Reviews().Insert(ctx, newRun(t, repoA)); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Insert on A's repository = %v, want ErrNotFound", err)
		}
		return nil
	})
}

// TestReviewRowsThatBreakTheRunsRulesDoNotLoad: a row the domain would
// never write (out of order times, a finished run without its finish
// time, a result on a queued run) is an error, never a silent value. The
// database refuses the times itself (TestReviewRunChecksAreTheLoaders):
// the CHECKs are dropped here, as in a database that lost them, to show
// that the loader does not rely on them. A row without its diff is
// refused by Get, which runs a run, and listed by Recent, which reads no
// diff.
func TestReviewRowsThatBreakTheRunsRulesDoNotLoad(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	repo := f.newRepository(t, a)
	owner := pgtest.Superuser(t, f.db)
	if _, err := owner.Bun().ExecContext(t.Context(),
		"ALTER TABLE review_runs DROP CONSTRAINT review_runs_times_per_status, DROP CONSTRAINT review_runs_times_in_order"); err != nil {
		t.Fatal(err)
	}
	t.Run("no diff", func(t *testing.T) {
		run := newRun(t, repo)
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, run) })
		if _, err := owner.Bun().ExecContext(t.Context(), "UPDATE review_runs SET diff = '' WHERE id = ?", run.ID()); err != nil {
			t.Fatal(err)
		}
		err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Reviews().Get(ctx, run.ID())
			return err
		})
		if !errors.Is(err, review.ErrInvalidStoredRun) {
			t.Errorf("Get = %v, want review.ErrInvalidStoredRun", err)
		}
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			list, err := tx.Reviews().Recent(ctx, repo, 50)
			if err != nil || len(list) != 1 || list[0].ID() != run.ID() {
				t.Errorf("Recent = %v, %v; want the run", list, err)
			}
			return nil
		})
		if _, err := owner.Bun().ExecContext(t.Context(), "DELETE FROM review_runs WHERE id = ?", run.ID()); err != nil {
			t.Fatal(err)
		}
	})
	for _, tt := range []struct{ name, set string }{
		{"started before it was created", "status = 'running', started_at = created_at - interval '1 second'"},
		{"done without a finish time", "status = 'done', started_at = created_at, prompt_version = 'v1'"},
		{"failed without a finish time", "status = 'failed'"},
		{"finished before it started", "status = 'failed', started_at = created_at + interval '1 hour', finished_at = created_at + interval '1 minute'"},
		{"queued with a result", "summary = 'leaked'"},
		{"running without a start", "status = 'running'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := newRun(t, repo)
			f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, run) })
			if _, err := owner.Bun().ExecContext(t.Context(), "UPDATE review_runs SET "+tt.set+" WHERE id = ?", run.ID()); err != nil {
				t.Fatal(err)
			}
			err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
				_, err := tx.Reviews().Get(ctx, run.ID())
				return err
			})
			if !errors.Is(err, review.ErrInvalidStoredRun) {
				t.Errorf("Get = %v, want review.ErrInvalidStoredRun", err)
			}
			err = f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
				_, err := tx.Reviews().Recent(ctx, repo, 50)
				return err
			})
			if !errors.Is(err, review.ErrInvalidStoredRun) {
				t.Errorf("Recent = %v, want review.ErrInvalidStoredRun", err)
			}
			if _, err := owner.Bun().ExecContext(t.Context(), "DELETE FROM review_runs WHERE id = ?", run.ID()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The tenant role may insert and read back jobs of its own tenant only,
// and has no access to River's other tables.
func TestTenantRoleOnJobQueue(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	runA, runB := newRun(t, f.newRepository(t, a)), newRun(t, f.newRepository(t, b))
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, runA) })
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, runB) })

	err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		var own, foreign int
		err := tx.NewRaw("SELECT count(*) FILTER (WHERE args ->> 'tenantId' = ?), count(*) FILTER (WHERE args ->> 'tenantId' <> ?) FROM river_job", a, a).
			Scan(ctx, &own, &foreign)
		if err != nil {
			return err
		}
		if own != 1 || foreign != 0 {
			t.Errorf("tenant A sees %d own and %d foreign jobs, want 1 and 0", own, foreign)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, query string
		args        []any
		want        string // SQLSTATE
	}{
		{"enqueue for another tenant", "INSERT INTO river_job (args, kind, max_attempts, priority, queue, state) VALUES (jsonb_build_object('tenantId', ?::text), 'review_run', 1, 1, 'default', 'available')", []any{b}, "42501"},
		{"update a job", "UPDATE river_job SET state = 'completed'", nil, "42501"},
		{"delete a job", "DELETE FROM river_job", nil, "42501"},
		{"read river_queue", "SELECT count(*) FROM river_queue", nil, "42501"},
		{"read river_leader", "SELECT count(*) FROM river_leader", nil, "42501"},
		{"read river_migration", "SELECT count(*) FROM river_migration", nil, "42501"},
	}
	for _, tt := range tests {
		err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, tt.query, tt.args...)
			return err
		})
		if got := sqlState(err); got != tt.want {
			t.Errorf("%s: error %v (SQLSTATE %q), want SQLSTATE %s", tt.name, err, got, tt.want)
		}
	}
	if err := f.db.CheckTenantRole(t.Context()); err != nil {
		t.Errorf("CheckTenantRole with the job queue grants: %v", err)
	}
}
