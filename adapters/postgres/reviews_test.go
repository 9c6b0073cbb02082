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

func newRun(t *testing.T, repo string) ports.ReviewRun {
	return ports.ReviewRun{
		ID: newID(t), RepositoryID: repo, Title: "Add cache", Description: "why",
		Diff:  "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n",
		Files: map[string]string{"a.go": "package a\n"},
	}
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
			if n := len(jobsOfReview(t, f.db, run.ID)); n != 0 {
				t.Errorf("job visible outside the transaction before commit: %d rows", n)
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InTenant = %v, want %v", err, errBoom)
		}
		if runExists(t, f.db, run.ID) {
			t.Error("run stored after rollback")
		}
		if jobs := jobsOfReview(t, f.db, run.ID); len(jobs) != 0 {
			t.Errorf("jobs after rollback: %+v, want none", jobs)
		}
	})

	t.Run("committed: both, the job carrying ids only", func(t *testing.T) {
		run := newRun(t, repo)
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Reviews().Insert(ctx, run)
		})
		if !runExists(t, f.db, run.ID) {
			t.Error("run missing after commit")
		}
		want := []jobRow{{
			Kind: postgres.ReviewJobKind, Args: map[string]any{"tenantId": a, "reviewId": run.ID},
			State: "available", MaxAttempts: postgres.ReviewJobMaxAttempts,
		}}
		if diff := cmp.Diff(want, jobsOfReview(t, f.db, run.ID)); diff != "" {
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
		if runExists(t, f.db, run.ID) {
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

	ignoreTimes := cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".CreatedAt", ".StartedAt", ".FinishedAt":
			return true
		}
		return false
	}, cmp.Ignore())

	var created time.Time
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, run.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		want := run
		want.Status = review.Queued
		want.Findings = []review.Finding{}
		if diff := cmp.Diff(want, got, ignoreTimes); diff != "" {
			t.Errorf("Get after Insert (-want +got):\n%s", diff)
		}
		if got.CreatedAt.IsZero() || !got.StartedAt.IsZero() || !got.FinishedAt.IsZero() {
			t.Errorf("times after Insert: created %v, started %v, finished %v; want created only",
				got.CreatedAt, got.StartedAt, got.FinishedAt)
		}
		created = got.CreatedAt

		if err := tx.Reviews().Insert(ctx, run); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Insert of a used id = %v, want ErrConflict", err)
		}
		for _, repo := range []string{newID(t), "nope"} {
			if err := tx.Reviews().Insert(ctx, newRun(t, repo)); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("Insert for repository %q = %v, want ErrNotFound", repo, err)
			}
		}
		return nil
	})

	first := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Start(ctx, run.ID, first)
		if err != nil || got.Status != review.Running || !got.StartedAt.Equal(first) {
			t.Errorf("Start = %s at %v, %v; want running at %v", got.Status, got.StartedAt, err, first)
		}
		// A retry starts a running run again and keeps the first start.
		got, err = tx.Reviews().Start(ctx, run.ID, first.Add(time.Minute))
		if err != nil || got.Status != review.Running || !got.StartedAt.Equal(first) {
			t.Errorf("Start again = %s at %v, %v; want running at %v", got.Status, got.StartedAt, err, first)
		}
		if got.Diff != run.Diff || got.Files["a.go"] != run.Files["a.go"] {
			t.Errorf("Start returned diff %q files %v, want the stored request", got.Diff, got.Files)
		}
		return nil
	})

	prompt := "mcp-v1"
	done := run
	done.Status = review.Done
	done.PromptVersion = "review-v1.5"
	done.Findings = []review.Finding{{Path: "a.go", Line: 1, Title: "t", Body: "b", Evidence: "+y"}}
	done.Summary = "One paragraph."
	done.Stats = review.Stats{Mcp: review.McpStats{Prompt: &prompt, Calls: 2, Bytes: 300, Blocked: 1}}
	done.FinishedAt = first.Add(2 * time.Minute)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Finish(ctx, done)
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, run.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(done, got, ignoreTimes); diff != "" {
			t.Errorf("Get after Finish (-want +got):\n%s", diff)
		}
		if !got.CreatedAt.Equal(created) || !got.StartedAt.Equal(first) || !got.FinishedAt.Equal(done.FinishedAt) {
			t.Errorf("times = %v %v %v, want %v %v %v", got.CreatedAt, got.StartedAt, got.FinishedAt, created, first, done.FinishedAt)
		}

		// Finished runs are final.
		if _, err := tx.Reviews().Start(ctx, run.ID, time.Now()); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Start of a done run = %v, want ErrConflict", err)
		}
		failed := done
		failed.Status = review.Failed
		if err := tx.Reviews().Finish(ctx, failed); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("Finish of a done run = %v, want ErrConflict", err)
		}
		bad := done
		bad.Status = review.Running
		if err := tx.Reviews().Finish(ctx, bad); err == nil {
			t.Error("Finish with status running succeeded, want an error")
		}
		return nil
	})

	// A run without stats reads back with zero stats and no MCP prompt; a
	// zero FinishedAt is the database's time.
	plain := newRun(t, repoA)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Reviews().Insert(ctx, plain); err != nil {
			return err
		}
		return tx.Reviews().Finish(ctx, ports.ReviewRun{ID: plain.ID, Status: review.Failed})
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Get(ctx, plain.ID)
		if err != nil {
			return err
		}
		if got.Status != review.Failed || cmp.Diff(got.Stats, review.Stats{}) != "" || got.PromptVersion != "" || got.FinishedAt.IsZero() {
			t.Errorf("failed run = %s, stats %+v, prompt %q, finished %v; want failed, zero stats, no prompt, a finish time",
				got.Status, got.Stats, got.PromptVersion, got.FinishedAt)
		}
		return nil
	})
	// The stored stats keep the JSON keys every reader of the column knows.
	var stored string
	if err := f.db.WithTenant(t.Context(), a, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT stats::text FROM review_runs WHERE id = ?", plain.ID).Scan(ctx, &stored)
	}); err != nil || stored != `{"mcp": {"bytes": 0, "calls": 0, "prompt": null, "blocked": 0}}` {
		t.Errorf("stored stats = %s, %v", stored, err)
	}

	// Tenant B sees none of A's runs, whatever it does.
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		for _, id := range []string{run.ID, plain.ID, newID(t), "nope", ""} {
			if _, err := tx.Reviews().Get(ctx, id); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Get(%q) = %v, want ErrNotFound", id, err)
			}
			if _, err := tx.Reviews().Start(ctx, id, time.Now()); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Start(%q) = %v, want ErrNotFound", id, err)
			}
			if err := tx.Reviews().Finish(ctx, ports.ReviewRun{ID: id, Status: review.Failed}); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("B Finish(%q) = %v, want ErrNotFound", id, err)
			}
		}
		// Nor can it review A's repository.
		if err := tx.Reviews().Insert(ctx, newRun(t, repoA)); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("B Insert on A's repository = %v, want ErrNotFound", err)
		}
		return nil
	})
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
