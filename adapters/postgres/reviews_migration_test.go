package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/migrations"
	"github.com/codelotse/codelotse/ports"
)

// runTimesMigration is the migration that clamps review_runs' times and
// adds their CHECK constraints.
const runTimesMigration = "20261221100000"

// undoMigration takes db back to before the migration named version: its
// down runs and it is marked unapplied, so the next Migrate applies it
// again, as the owner (not a superuser) that migrates in production.
func undoMigration(t *testing.T, db *postgres.DB, version string) {
	t.Helper()
	ctx := t.Context()
	m := migrate.NewMigrator(db.Bun(), migrations.New())
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, mig := range ms {
		if mig.Name != version {
			continue
		}
		if !mig.IsApplied() {
			t.Fatalf("migration %s is not applied", version)
		}
		if err := mig.Down(ctx, m, &mig); err != nil {
			t.Fatalf("down %s: %v", version, err)
		}
		if err := m.MarkUnapplied(ctx, &mig); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no migration %s", version)
}

// TestReviewRunTimesMigration: rows the service stored before its loader
// checked a run's times (created on the API replica's clock, started and
// failed on workers' clocks behind it) do not load; the migration clamps
// them the way the domain clamps a transition given an earlier time, and
// afterwards every run loads, alone and in the repository's list.
func TestReviewRunTimesMigration(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	repo := f.newRepository(t, a)
	undoMigration(t, f.db, runTimesMigration)

	c := runCreated
	at := func(d time.Duration) time.Time { return c.Add(d) }
	none := time.Time{}
	rows := []struct {
		name            string
		status          review.RunStatus
		started, fin    time.Time // as the older code stored them
		wantSt, wantFin time.Time // after the migration
	}{
		{"started before it was created (a worker behind the API)", review.Running, at(-2 * time.Second), none, c, none},
		{"failed before it was created, never started", review.Failed, none, at(-5 * time.Second), none, c},
		{"failed before it started (the last attempt's callback on a clock behind)", review.Failed, at(time.Hour), at(time.Minute), at(time.Hour), at(time.Hour)},
		{"done, started and finished before it was created", review.Done, at(-10 * time.Second), at(-5 * time.Second), c, c},
		{"done before it started", review.Done, at(2 * time.Minute), at(time.Minute), at(2 * time.Minute), at(2 * time.Minute)},
		{"failed before it started, started before it was created", review.Failed, at(-time.Minute), at(-2 * time.Minute), c, c},
		{"in order: left alone", review.Done, at(time.Minute), at(2 * time.Minute), at(time.Minute), at(2 * time.Minute)},
		{"every time the same: left alone", review.Done, c, c, c, c},
		{"queued: left alone", review.Queued, none, none, none, none},
	}
	su := pgtest.Superuser(t, f.db)
	ids := make([]string, len(rows))
	for i, r := range rows {
		run := newRun(t, repo)
		ids[i] = run.ID()
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, run) })
		prompt := map[bool]any{true: "review-v1.5", false: nil}[r.status == review.Done]
		if _, err := su.Bun().ExecContext(t.Context(), "UPDATE review_runs SET status = ?, prompt_version = ?, started_at = ?, finished_at = ? WHERE id = ?",
			r.status, prompt, bun.NullTime{Time: r.started}, bun.NullTime{Time: r.fin}, run.ID()); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	// Before the migration, one such row fails the repository's page.
	err := f.try(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Reviews().Recent(ctx, repo, 50)
		return err
	})
	if !errors.Is(err, review.ErrInvalidStoredRun) {
		t.Fatalf("Recent before the migration = %v, want review.ErrInvalidStoredRun", err)
	}

	applied, err := f.db.Migrate(t.Context())
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if len(applied) != 1 || applied[0] != runTimesMigration+"_review_run_times" {
		t.Fatalf("Migrate applied %v, want the one migration", applied)
	}
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		for i, r := range rows {
			got, err := tx.Reviews().Get(ctx, ids[i])
			if err != nil {
				t.Errorf("%s: Get after the migration: %v", r.name, err)
				continue
			}
			if got.Status() != r.status || !got.CreatedAt().Equal(c) || !got.StartedAt().Equal(r.wantSt) || !got.FinishedAt().Equal(r.wantFin) {
				t.Errorf("%s: %s, created %v, started %v, finished %v; want %s, %v, %v, %v", r.name,
					got.Status(), got.CreatedAt(), got.StartedAt(), got.FinishedAt(), r.status, c, r.wantSt, r.wantFin)
			}
		}
		list, err := tx.Reviews().Recent(ctx, repo, 50)
		if err != nil || len(list) != len(rows) {
			t.Errorf("Recent after the migration = %d runs, %v; want %d", len(list), err, len(rows))
		}
		return nil
	})
	// And the database keeps them so.
	_, err = su.Bun().ExecContext(t.Context(), "UPDATE review_runs SET finished_at = created_at - interval '1 second' WHERE id = ?", ids[1])
	if got := sqlState(err); got != "23514" {
		t.Errorf("a finish before the creation after the migration: %v (SQLSTATE %q), want a check violation", err, got)
	}
}

// TestReviewRunChecksAreTheLoaders: review_runs' CHECK constraints on a
// run's times take exactly the rows whose times
// review.UnmarshalRunFromDatabase takes: every status with every start
// and finish, absent, before, at and after the creation and each other.
func TestReviewRunChecksAreTheLoaders(t *testing.T) {
	f := newFixture(t)
	a := f.tenant(t, "a")
	repo := f.newRepository(t, a)
	su := pgtest.Superuser(t, f.db)
	c := runCreated
	times := []time.Time{{}, c.Add(-time.Second), c, c.Add(time.Minute), c.Add(2 * time.Minute)}
	name := func(tm time.Time) string {
		if tm.IsZero() {
			return "none"
		}
		return fmt.Sprint(tm.Sub(c))
	}
	for _, status := range review.RunStatuses() {
		res := review.Result{}
		if status == review.Done {
			res.PromptVersion = "review-v1.5"
		}
		for _, st := range times {
			for _, fi := range times {
				id := newID(t)
				_, loadErr := review.UnmarshalRunFromDatabase(id, repo, status, review.Request{Title: "t", Diff: "+"}, res, c, st, fi)
				_, err := su.Bun().ExecContext(t.Context(),
					`INSERT INTO review_runs (id, tenant_id, repository_id, status, title, diff, prompt_version, created_at, started_at, finished_at)
					 VALUES (?, ?, ?, ?, 't', '+', nullif(?, ''), ?, ?, ?)`,
					id, a, repo, status, res.PromptVersion, c, bun.NullTime{Time: st}, bun.NullTime{Time: fi})
				switch code := sqlState(err); {
				case err != nil && code != "23514":
					t.Fatalf("insert: %v", err)
				case (loadErr == nil) != (err == nil):
					t.Errorf("%s, started %s, finished %s: the loader says %v, the database %v",
						status, name(st), name(fi), loadErr, err)
				}
			}
		}
	}
}
