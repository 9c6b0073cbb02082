package postgres_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
)

func TestDeleteExpiredToolCalls(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, b, c := f.tenant(t, "a"), f.tenant(t, "b"), f.tenant(t, "c")

	// A keeps the default 90 days, B 7 days, C 30 days with more expired
	// rows than one batch.
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE tenants SET retention_days = 7 WHERE id = ?", b); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE tenants SET retention_days = 30 WHERE id = ?", c); err != nil {
			return err
		}
		for _, tenant := range []string{a, b, c} {
			var server string
			if err := tx.NewRaw("INSERT INTO mcp_servers (tenant_id, name, url) VALUES (?, 'wiki', 'https://wiki.example.com/mcp') RETURNING id", tenant).
				Scan(ctx, &server); err != nil {
				return err
			}
			for _, days := range []int{100, 31, 8, 1} {
				if _, err := tx.ExecContext(ctx,
					"INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at) VALUES (?, ?, ?, 'ok', now() - make_interval(days => ?))",
					tenant, server, days, days); err != nil {
					return err
				}
			}
			if tenant == c {
				if _, err := tx.ExecContext(ctx,
					"INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at) SELECT ?, ?, 'old', 'ok', now() - interval '40 days' FROM generate_series(1, 5003)",
					tenant, server); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	n, err := f.db.DeleteExpiredToolCalls(ctx)
	if err != nil {
		t.Fatalf("DeleteExpiredToolCalls: %v", err)
	}
	if want := int64(1 + 3 + 2 + 5003); n != want {
		t.Errorf("DeleteExpiredToolCalls deleted %d, want %d", n, want)
	}

	left := map[string][]string{}
	err = f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT tenant_id, tool FROM mcp_tool_calls ORDER BY tenant_id, created_at")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var tenant, tool string
			if err := rows.Scan(&tenant, &tool); err != nil {
				return err
			}
			left[tenant] = append(left[tenant], tool)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{a: {"31", "8", "1"}, b: {"1"}, c: {"8", "1"}}
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("records left (-want +got):\n%s", diff)
	}

	if n, err := f.db.DeleteExpiredToolCalls(ctx); err != nil || n != 0 {
		t.Errorf("second DeleteExpiredToolCalls = %d, %v; want 0, nil", n, err)
	}
}
