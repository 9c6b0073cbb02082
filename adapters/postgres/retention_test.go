package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/ports"
)

type retentionClock struct{ now time.Time }

func (c retentionClock) Now() time.Time { return c.now }

type retentionMetrics map[string]int64

func (m retentionMetrics) RetentionDeleted(table string, n int64) { m[table] += n }

// TestRetentionJob runs the application's retention job on the real
// store with an injected clock far from the database's: tenants with
// different retention, prompt logs past their TTL, a running and a
// queued review older than any retention, and more rows than one batch.
func TestRetentionJob(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	now := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	ago := func(days int) time.Time { return now.AddDate(0, 0, -days) }
	a, b, c := f.tenant(t, "a"), f.tenant(t, "b"), f.tenant(t, "c")

	var err error
	err = f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		exec := func(q string, args ...any) {
			if err == nil {
				_, err = tx.ExecContext(ctx, q, args...)
			}
		}
		exec("UPDATE tenants SET retention_days = 7 WHERE id = ?", b)
		exec("UPDATE tenants SET retention_days = 30 WHERE id = ?", c)
		for _, tenant := range []string{a, b, c} {
			var repo, server, recent, running string
			if err := tx.NewRaw("INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'acme/api', 'private') RETURNING id", tenant).Scan(ctx, &repo); err != nil {
				return err
			}
			if err := tx.NewRaw("INSERT INTO mcp_servers (tenant_id, name, url) VALUES (?, 'wiki', 'https://wiki.example.com/mcp') RETURNING id", tenant).Scan(ctx, &server); err != nil {
				return err
			}
			for _, days := range []int{100, 31, 8, 1} {
				tag := fmt.Sprint(days)
				var id string
				if err := tx.NewRaw("INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at, started_at, finished_at) VALUES (?0, ?1, 'done', ?2, ?3, ?3, ?3) RETURNING id",
					tenant, repo, tag, ago(days)).Scan(ctx, &id); err != nil {
					return err
				}
				if days == 1 {
					recent = id
				}
				exec("INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at) VALUES (?, ?, ?, 'ok', ?)", tenant, server, tag, ago(days))
				exec("INSERT INTO audit_events (tenant_id, action, actor, at) VALUES (?, ?, 'test', ?)", tenant, tag, ago(days))
				exec("INSERT INTO audit_outbox (tenant_id, type, occurred_at, data) VALUES (?, 'audit', ?, jsonb_build_object('action', ?::text))", tenant, ago(days), tag)
			}
			// Never deleted, however old: a run still queued or running.
			for _, status := range []string{"queued", "running"} {
				if err := tx.NewRaw("INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at, started_at) VALUES (?0, ?1, ?2, ?2, ?3, CASE WHEN ?2 = 'running' THEN ?3::timestamptz END) RETURNING id",
					tenant, repo, status, ago(400)).Scan(ctx, &running); err != nil {
					return err
				}
			}
			// Prompt logs: one past its TTL, one not; for c, one within its
			// TTL but older than c's 30 days.
			exec("INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at) VALUES (?, ?, 'finder', 1, 'x', ?, ?)",
				tenant, recent, now.Add(-25*time.Hour), now.Add(-time.Hour))
			exec("INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at) VALUES (?, ?, 'finder', 2, 'x', ?, ?)",
				tenant, recent, now.Add(-time.Hour), now.Add(23*time.Hour))
			if tenant == c {
				exec("INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at) VALUES (?, ?, 'summary', 1, 'x', ?, ?)",
					tenant, running, ago(40), now.Add(time.Hour))
				exec("INSERT INTO audit_events (tenant_id, action, actor, at) SELECT ?, 'bulk', 'test', ? FROM generate_series(1, 25)", tenant, ago(40))
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	metrics := retentionMetrics{}
	job := operations.NewRetentionJob(postgres.NewRetention(f.db), metrics, retentionClock{now})
	job.BatchSize = 10
	deleted, err := job.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[string]int64{
		ports.RetainReviews:    1 + 3 + 2,
		ports.RetainToolCalls:  1 + 3 + 2,
		ports.RetainAuditLog:   1 + 3 + 2 + 25,
		ports.RetainOutbox:     1 + 3 + 2,
		ports.RetainPromptLogs: 1 + 1 + 2,
	}
	if diff := cmp.Diff(want, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, map[string]int64(metrics)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}

	left := func(query string) map[string][]string {
		out := map[string][]string{}
		err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
			rows, err := tx.QueryContext(ctx, query)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var tenant, v string
				if err := rows.Scan(&tenant, &v); err != nil {
					return err
				}
				out[tenant] = append(out[tenant], v)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	checks := []struct {
		query string
		want  map[string][]string
	}{
		{"SELECT tenant_id, title FROM review_runs ORDER BY tenant_id, created_at, title",
			map[string][]string{a: {"queued", "running", "31", "8", "1"}, b: {"queued", "running", "1"}, c: {"queued", "running", "8", "1"}}},
		{"SELECT tenant_id, tool FROM mcp_tool_calls ORDER BY tenant_id, created_at",
			map[string][]string{a: {"31", "8", "1"}, b: {"1"}, c: {"8", "1"}}},
		{"SELECT tenant_id, action FROM audit_events ORDER BY tenant_id, at",
			map[string][]string{a: {"31", "8", "1"}, b: {"1"}, c: {"8", "1"}}},
		{"SELECT tenant_id, data ->> 'action' FROM audit_outbox ORDER BY tenant_id, occurred_at",
			map[string][]string{a: {"31", "8", "1"}, b: {"1"}, c: {"8", "1"}}},
		{"SELECT tenant_id, step || turn FROM prompt_logs ORDER BY tenant_id, created_at",
			map[string][]string{a: {"finder2"}, b: {"finder2"}, c: {"finder2"}}},
	}
	for _, ch := range checks {
		if diff := cmp.Diff(ch.want, left(ch.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", ch.query, diff)
		}
	}

	again, err := job.Run(ctx)
	if err != nil || again[ports.RetainReviews]+again[ports.RetainToolCalls]+again[ports.RetainAuditLog]+again[ports.RetainOutbox]+again[ports.RetainPromptLogs] != 0 {
		t.Errorf("second Run = %v, %v; want nothing deleted", again, err)
	}
}

func TestRetentionRefusesUnknownTables(t *testing.T) {
	f := newFixture(t)
	if _, _, err := postgres.NewRetention(f.db).DeleteExpired(t.Context(), "api_tokens", time.Now(), ports.RetentionCursor{}, 10); err == nil {
		t.Error("DeleteExpired(api_tokens) = nil error")
	}
}

// batchLog wraps the store: it records what each batch deleted and
// cancels the run's context after stopAfter batches (0: never), as a
// process killed between two batches would stop.
type batchLog struct {
	ports.Retention
	deleted   []int64
	stopAfter int
	cancel    context.CancelFunc
}

func (b *batchLog) DeleteExpired(ctx context.Context, table string, now time.Time, after ports.RetentionCursor, limit int) (int64, ports.RetentionCursor, error) {
	n, next, err := b.Retention.DeleteExpired(ctx, table, now, after, limit)
	b.deleted = append(b.deleted, n)
	if b.stopAfter > 0 && len(b.deleted) == b.stopAfter {
		b.cancel()
	}
	return n, next, err
}

// TestRetentionInterruptedRunResumes stops a run between two batches in
// the middle of a tenant's rows, then runs again: together the two runs
// delete every expired row once and count each once, no batch deletes
// more than its size, and nothing unexpired is touched. Rows of several
// tenants share timestamps, so the cursor's tie at one time is covered.
func TestRetentionInterruptedRunResumes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	now := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	tenants := []string{f.tenant(t, "a"), f.tenant(t, "b"), f.tenant(t, "c")}
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		for i, tenant := range tenants {
			var server, repo string
			if err := tx.NewRaw("INSERT INTO mcp_servers (tenant_id, name, url) VALUES (?, 'wiki', 'https://wiki.example.com/mcp') RETURNING id", tenant).Scan(ctx, &server); err != nil {
				return err
			}
			if err := tx.NewRaw("INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'acme/api', 'private') RETURNING id", tenant).Scan(ctx, &repo); err != nil {
				return err
			}
			// 23 + 10i expired call records (pairs share a time), 5 kept;
			// as many expired reviews and audit events.
			for _, q := range []string{
				`INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at)
				 SELECT ?0, ?1, 'old', 'ok', ?2::timestamptz - make_interval(days => 100, secs => g / 2) FROM generate_series(1, ?3) g`,
				`INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at)
				 SELECT ?0, ?1, 'new', 'ok', ?2::timestamptz - make_interval(days => 1, secs => g) FROM generate_series(1, 5) g`,
				`INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at, started_at, finished_at)
				 SELECT ?0, ?4, 'done', 'old', at, at, at
				 FROM (SELECT ?2::timestamptz - make_interval(days => 100, secs => g / 2) AS at FROM generate_series(1, ?3) g) x`,
				`INSERT INTO audit_events (tenant_id, action, actor, at)
				 SELECT ?0, 'old', 'test', ?2::timestamptz - make_interval(days => 100, secs => g / 2) FROM generate_series(1, ?3) g`,
			} {
				if _, err := tx.NewRaw(q, tenant, server, now, 23+10*i, repo).Exec(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const expired = 23 + 33 + 43
	const batch = 7

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := &batchLog{Retention: postgres.NewRetention(f.db), stopAfter: 9, cancel: cancel}
	job := operations.NewRetentionJob(first, retentionMetrics{}, retentionClock{now})
	job.BatchSize = batch
	got1, err := job.Run(runCtx)
	if err == nil {
		t.Fatalf("interrupted run = %v, nil error", got1)
	}
	second := &batchLog{Retention: postgres.NewRetention(f.db)}
	job = operations.NewRetentionJob(second, retentionMetrics{}, retentionClock{now})
	job.BatchSize = batch
	got2, err := job.Run(ctx)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	for _, table := range []string{ports.RetainToolCalls, ports.RetainReviews, ports.RetainAuditLog} {
		if got1[table]+got2[table] != expired {
			t.Errorf("%s: deleted %d + %d, want %d in all", table, got1[table], got2[table], expired)
		}
	}
	if got1[ports.RetainToolCalls] == 0 || got1[ports.RetainToolCalls] == expired {
		t.Errorf("the first run deleted %d call records; want it stopped part way", got1[ports.RetainToolCalls])
	}
	for _, n := range append(first.deleted, second.deleted...) {
		if n > batch {
			t.Errorf("a batch deleted %d rows, more than its %d", n, batch)
		}
	}
	var left map[string]int
	err = f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		left = map[string]int{}
		for _, q := range []string{
			"SELECT 'calls ' || tool, count(*) FROM mcp_tool_calls GROUP BY tool",
			"SELECT 'reviews ' || title, count(*) FROM review_runs GROUP BY title",
			"SELECT 'audit ' || action, count(*) FROM audit_events WHERE action = 'old' GROUP BY action",
		} {
			rows, err := tx.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			for rows.Next() {
				var k string
				var n int
				if err := rows.Scan(&k, &n); err != nil {
					return err
				}
				left[k] = n
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"calls new": 15}, left); diff != "" {
		t.Errorf("rows left (-want +got):\n%s", diff)
	}
}
