package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/ports"
)

// TestRetentionDeleteRemovesAtMostItsBatch: one DeleteExpired removes at
// most its batch size, also when several tenants each have a batch's
// worth of expired rows and when prompt logs are past their TTL as well
// as past their tenant's retention.
func TestRetentionDeleteRemovesAtMostItsBatch(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	now := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	const batch = 5
	tenants := []string{f.tenant(t, "a"), f.tenant(t, "b"), f.tenant(t, "c")}
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		for _, tenant := range tenants {
			var repo, run string
			if err := tx.NewRaw("INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'acme/api', 'private') RETURNING id", tenant).Scan(ctx, &repo); err != nil {
				return err
			}
			if err := tx.NewRaw("INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at, started_at, finished_at) VALUES (?0, ?1, 'done', 'r', ?2, ?2, ?2) RETURNING id",
				tenant, repo, now.Add(-time.Hour)).Scan(ctx, &run); err != nil {
				return err
			}
			// A batch's worth of audit events past the tenant's 90 days.
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit_events (tenant_id, action, actor, at) SELECT ?, 'old', 'test', ? FROM generate_series(1, ?)",
				tenant, now.AddDate(0, 0, -100), batch); err != nil {
				return err
			}
			// Prompt logs past their TTL, and as many past the retention
			// only (their TTL still ahead).
			for i := range batch {
				if _, err := tx.ExecContext(ctx, "INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at) VALUES (?, ?, 'finder', ?, 'x', ?, ?)",
					tenant, run, i+1, now.Add(-2*time.Hour), now.Add(-time.Hour)); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at) VALUES (?, ?, 'summary', ?, 'x', ?, ?)",
					tenant, run, i+1, now.AddDate(0, 0, -100), now.Add(time.Hour)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	r := postgres.NewRetention(f.db)
	for _, tc := range []struct{ table, sql string }{
		{ports.RetainAuditLog, "audit_events"},
		{ports.RetainPromptLogs, "prompt_logs"},
		{ports.RetainPromptLogs, "prompt_logs"}, // past the TTL first, then past the retention
		{ports.RetainPromptLogs, "prompt_logs"},
		{ports.RetainPromptLogs, "prompt_logs"},
	} {
		before := count(tc.sql)
		n, _, err := r.DeleteExpired(ctx, tc.table, now, ports.RetentionCursor{}, batch)
		if err != nil {
			t.Fatal(err)
		}
		if gone := before - count(tc.sql); n != batch || gone != batch {
			t.Errorf("one batch of %s: reported %d, removed %d rows; want exactly the batch size %d (more than that are expired)", tc.table, n, gone, batch)
		}
	}
}
