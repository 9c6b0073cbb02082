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
				if err := tx.NewRaw("INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at) VALUES (?, ?, 'done', ?, ?) RETURNING id",
					tenant, repo, tag, ago(days)).Scan(ctx, &id); err != nil {
					return err
				}
				if days == 1 {
					recent = id
				}
				exec("INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at) VALUES (?, ?, ?, 'ok', ?)", tenant, server, tag, ago(days))
				exec("INSERT INTO audit_events (tenant_id, action, actor, at) VALUES (?, ?, 'test', ?)", tenant, tag, ago(days))
			}
			// Never deleted, however old: a run still queued or running.
			for _, status := range []string{"queued", "running"} {
				if err := tx.NewRaw("INSERT INTO review_runs (tenant_id, repository_id, status, title, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
					tenant, repo, status, status, ago(400)).Scan(ctx, &running); err != nil {
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
		{"SELECT tenant_id, step || turn FROM prompt_logs ORDER BY tenant_id, created_at",
			map[string][]string{a: {"finder2"}, b: {"finder2"}, c: {"finder2"}}},
	}
	for _, ch := range checks {
		if diff := cmp.Diff(ch.want, left(ch.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", ch.query, diff)
		}
	}

	again, err := job.Run(ctx)
	if err != nil || again[ports.RetainReviews]+again[ports.RetainToolCalls]+again[ports.RetainAuditLog]+again[ports.RetainPromptLogs] != 0 {
		t.Errorf("second Run = %v, %v; want nothing deleted", again, err)
	}
}

func TestRetentionRefusesUnknownTables(t *testing.T) {
	f := newFixture(t)
	if _, err := postgres.NewRetention(f.db).DeleteExpired(t.Context(), "api_tokens", time.Now(), 10); err == nil {
		t.Error("DeleteExpired(api_tokens) = nil error")
	}
}
