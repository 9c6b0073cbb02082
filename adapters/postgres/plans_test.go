package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/ports"
)

// queryLog records the SQL text of every query bun sends, so that a test
// can EXPLAIN exactly what a store ran.
type queryLog struct {
	mu      sync.Mutex
	queries []string
}

func (l *queryLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *queryLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries = append(l.queries, e.Query)
}

// during returns the query fn sent that contains marker, failing the
// test unless there is exactly one.
func (l *queryLog) during(t *testing.T, marker string, fn func() error) string {
	t.Helper()
	return l.all(t, marker, 1, fn)[0]
}

// all returns the want queries fn sent that contain marker, failing the
// test unless there are exactly want.
func (l *queryLog) all(t *testing.T, marker string, want int, fn func() error) []string {
	t.Helper()
	l.mu.Lock()
	start := len(l.queries)
	l.mu.Unlock()
	if err := fn(); err != nil {
		t.Fatalf("store call: %v", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, q := range l.queries[start:] {
		if strings.Contains(q, marker) {
			found = append(found, q)
		}
	}
	if len(found) != want {
		t.Fatalf("store call sent %d queries with %q, want %d: %q", len(found), marker, want, found)
	}
	return found
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

func (n planNode) String() string {
	var b strings.Builder
	var rec func(planNode, int)
	rec = func(n planNode, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.NodeType)
		if n.Relation != "" {
			fmt.Fprintf(&b, " on %s", n.Relation)
		}
		if n.Index != "" {
			fmt.Fprintf(&b, " using %s", n.Index)
		}
		b.WriteString("\n")
		for _, c := range n.Plans {
			rec(c, depth+1)
		}
	}
	rec(n, 0)
	return b.String()
}

// explain plans query inside tx and returns the plan's root.
func explain(ctx context.Context, tx bun.Tx, query string) (planNode, error) {
	var raw []byte
	if err := tx.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+query).Scan(&raw); err != nil {
		return planNode{}, err
	}
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		return planNode{}, fmt.Errorf("decode plan %s: %v", raw, err)
	}
	return out[0].Plan, nil
}

// checkOrderedByIndex fails unless plan reads table through index and
// sorts nothing: the rows come in the index's order and the LIMIT stops
// the scan.
func checkOrderedByIndex(t *testing.T, plan planNode, table, index string) {
	t.Helper()
	used, sorted, seq := false, false, false
	plan.walk(func(n planNode) {
		switch {
		case strings.Contains(n.NodeType, "Sort"):
			sorted = true
		case n.Relation == table && n.NodeType == "Seq Scan":
			seq = true
		case n.Relation == table && n.Index == index && strings.HasPrefix(n.NodeType, "Index"):
			used = true
		}
	})
	if !used || sorted || seq {
		t.Errorf("plan does not read %s in the order of %s (used %v, sort %v, seq scan %v):\n%s", table, index, used, sorted, seq, plan)
	}
}

// checkUsesIndex fails unless plan reads table through index and never
// scans all of it.
func checkUsesIndex(t *testing.T, plan planNode, table string, indexes ...string) {
	t.Helper()
	var used []string
	seq := false
	plan.walk(func(n planNode) {
		if n.Relation == table && n.NodeType == "Seq Scan" {
			seq = true
		}
		if n.Index != "" && slices.Contains(indexes, n.Index) && !slices.Contains(used, n.Index) {
			used = append(used, n.Index)
		}
	})
	if len(used) != len(indexes) || seq {
		t.Errorf("plan of %s uses %v, want %v without a sequential scan (seq scan %v):\n%s", table, used, indexes, seq, plan)
	}
}

// TestPlansUseTheirIndexes loads a tenant with enough rows that a sort or
// a sequential scan would be planned without the right index, refreshes
// the statistics, and plans every paged list of the store exactly as the
// store sends it, as the service runs it: the connecting role is the
// tables' owner and not a superuser (pgtest), tenant queries run as
// codelotse_tenant under forced row-level security, the retention job and
// the session sweep on the system path. Each plan must read its rows in
// the order of the index made for the query (no Sort node) or, for the
// retention batches and the session sweep, through their indexes without
// a sequential scan of the table.
func TestPlansUseTheirIndexes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	tokenHash := sha256Of("plans-token")
	if _, err := f.accounts.CreateToken(ctx, a, tokenHash, []string{"repo:manage"}); err != nil {
		t.Fatal(err)
	}
	// Tenant a: 2,000 repositories, 20 servers, 40,000 reviews (half of
	// them in one repository), 120,000 call records (half of them of one
	// server, pairs with the same time so that the tie-break matters),
	// 40,000 audit events, 10,000 prompt logs, 20,000 web sessions; b a
	// little of each.
	seed := []string{
		`INSERT INTO repositories (tenant_id, name, visibility)
		 SELECT ?0, 'org/repo-' || lpad(g::text, 5, '0'), 'private' FROM generate_series(1, 2000) g`,
		`INSERT INTO repositories (tenant_id, name, visibility) VALUES (?1, 'org/b', 'private')`,
		`INSERT INTO mcp_servers (tenant_id, name, url)
		 SELECT ?0, 'srv' || g, 'https://srv' || g || '.example.com/mcp' FROM generate_series(1, 20) g`,
		`INSERT INTO review_runs (tenant_id, repository_id, status, title, prompt_version, created_at, started_at, finished_at)
		 SELECT ?0, CASE WHEN g % 2 = 0 THEN r.ids[1] ELSE r.ids[1 + g % 2000] END, 'done', 't', 'v1', at, at, at
		 FROM (SELECT g, timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g / 2) AS at FROM generate_series(1, 40000) g) x,
		      (SELECT array_agg(id ORDER BY name) AS ids FROM repositories WHERE tenant_id = ?0) r`,
		`INSERT INTO mcp_tool_calls (tenant_id, server_id, review_id, tool, status, created_at)
		 SELECT ?0, CASE WHEN g % 2 = 0 THEN s.ids[1] ELSE s.ids[1 + g % 20] END, rv.ids[1 + g % 40000], 'search', 'ok',
		        timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g / 2)
		 FROM generate_series(1, 120000) g,
		      (SELECT array_agg(id ORDER BY name) AS ids FROM mcp_servers WHERE tenant_id = ?0) s,
		      (SELECT array_agg(id ORDER BY id) AS ids FROM review_runs WHERE tenant_id = ?0) rv`,
		`INSERT INTO audit_events (tenant_id, action, actor, at)
		 SELECT ?0, 'server.create', 'test', timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g / 2)
		 FROM generate_series(1, 40000) g`,
		`INSERT INTO audit_outbox (tenant_id, type, occurred_at, data)
		 SELECT ?0, 'audit', timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g / 2), '{}'
		 FROM generate_series(1, 40000) g`,
		`INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at)
		 SELECT ?0, rv.ids[1 + g % 40000], 'finder', 1 + g / 40000, 'x',
		        timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g),
		        timestamptz '2026-12-01 09:00:00Z' - make_interval(secs => g)
		 FROM generate_series(1, 10000) g,
		      (SELECT array_agg(id ORDER BY id) AS ids FROM review_runs WHERE tenant_id = ?0) rv`,
		`INSERT INTO web_sessions (id_hash, tenant_id, token_id, created_at, last_seen_at)
		 SELECT sha256(g::text::bytea), ?0, (SELECT id FROM api_tokens WHERE tenant_id = ?0),
		        timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g),
		        timestamptz '2026-11-30 09:00:00Z' - make_interval(secs => g % 1700)
		 FROM generate_series(1, 20000) g`,
		`ANALYZE`,
	}
	err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		for _, q := range seed {
			if _, err := tx.NewRaw(q, a, b).Exec(ctx); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var hotServer, quietServer, hotRepo, quietRepo, aReview string
	err = f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw("SELECT id FROM mcp_servers WHERE tenant_id = ? AND name = 'srv1'", a).Scan(ctx, &hotServer); err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT id FROM mcp_servers WHERE tenant_id = ? AND name = 'srv2'", a).Scan(ctx, &quietServer); err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT id FROM repositories WHERE tenant_id = ? AND name = 'org/repo-00001'", a).Scan(ctx, &hotRepo); err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT id FROM repositories WHERE tenant_id = ? AND name = 'org/repo-00008'", a).Scan(ctx, &quietRepo); err != nil {
			return err
		}
		return tx.NewRaw("SELECT review_id FROM prompt_logs WHERE tenant_id = ? LIMIT 1", a).Scan(ctx, &aReview)
	})
	if err != nil {
		t.Fatal(err)
	}
	var superuser bool
	if err := f.db.Bun().NewRaw("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(ctx, &superuser); err != nil || superuser {
		t.Fatalf("the connecting role is a superuser (%v, %v): the plans would not be the service's", superuser, err)
	}

	log := &queryLog{}
	f.db.Bun().AddQueryHook(log)
	tenants := postgres.NewTenants(f.db)
	// read runs a store call in tenant a as the API does (the read
	// scope or a tenant transaction) and checks it returned rows.
	read := func(fn func(ctx context.Context, tx ports.TenantTx) (int, error)) func() error {
		return func() error {
			return tenants.InTenant(ctx, a, func(ctx context.Context, tx ports.TenantTx) error {
				n, err := fn(ctx, tx)
				if err == nil && n == 0 {
					err = fmt.Errorf("no rows: the plan would be tested on nothing")
				}
				return err
			})
		}
	}
	// planInTenant plans q as codelotse_tenant for tenant a.
	planInTenant := func(t *testing.T, q string) planNode {
		t.Helper()
		var plan planNode
		err := f.db.WithTenant(ctx, a, func(ctx context.Context, tx bun.Tx) error {
			var role string
			if err := tx.QueryRowContext(ctx, "SELECT current_user").Scan(&role); err != nil || role != postgres.TenantRole {
				return fmt.Errorf("planning as %q (%v), want %s", role, err, postgres.TenantRole)
			}
			var err error
			plan, err = explain(ctx, tx, q)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	planOnSystemPath := func(t *testing.T, q string) planNode {
		t.Helper()
		var plan planNode
		err := f.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
			var err error
			plan, err = explain(ctx, tx, q)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}

	lists := []struct {
		name, table, index, marker string
		call                       func(ctx context.Context, tx ports.TenantTx) (int, error)
	}{
		{"recent calls of a server", "mcp_tool_calls", "mcp_tool_calls_server_recent_idx", "FROM \"mcp_tool_calls\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				c, err := tx.Calls().Recent(ctx, hotServer, 50)
				return len(c), err
			}},
		// A server with 3,000 of the tenant's 120,000 calls: the planner
		// combined an index on the server alone with the tenant's index.
		{"recent calls of a quiet server", "mcp_tool_calls", "mcp_tool_calls_server_recent_idx", "FROM \"mcp_tool_calls\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				c, err := tx.Calls().Recent(ctx, quietServer, 50)
				return len(c), err
			}},
		{"calls of a review", "mcp_tool_calls", "mcp_tool_calls_review_order_idx", "FROM \"mcp_tool_calls\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				c, err := tx.Calls().ForReview(ctx, aReview, 200)
				return len(c), err
			}},
		{"reviews of a repository", "review_runs", "review_runs_repository_recent_idx", "FROM \"review_runs\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				r, err := tx.Reviews().Recent(ctx, hotRepo, 50)
				return len(r), err
			}},
		{"reviews of a quiet repository", "review_runs", "review_runs_repository_recent_idx", "FROM \"review_runs\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				r, err := tx.Reviews().Recent(ctx, quietRepo, 50)
				return len(r), err
			}},
		{"audit log", "audit_events", "audit_events_tenant_at_idx", "FROM \"audit_events\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				e, err := tx.Audit().Recent(ctx, 100)
				return len(e), err
			}},
		{"repositories, first page", "repositories", "repositories_tenant_id_name_key", "FROM \"repositories\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				r, err := tx.Repositories().List(ctx, "", 50)
				return len(r), err
			}},
		{"repositories, a later page", "repositories", "repositories_tenant_id_name_key", "FROM \"repositories\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				r, err := tx.Repositories().List(ctx, "org/repo-01000", 50)
				return len(r), err
			}},
		{"prompt logs of a review", "prompt_logs", "prompt_logs_review_idx", "FROM \"prompt_logs\"",
			func(ctx context.Context, tx ports.TenantTx) (int, error) {
				p, err := tx.PromptLogs().List(ctx, aReview, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
				return len(p), err
			}},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			q := log.during(t, l.marker, read(l.call))
			checkOrderedByIndex(t, planInTenant(t, q), l.table, l.index)
		})
	}

	// The retention batches, on the system path as the (non-superuser)
	// owner, with little expired: each tenant's rows are read through its
	// (tenant_id, time) index from the oldest, never the whole table.
	retention := postgres.NewRetention(f.db)
	longAgo := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // nothing is older than 90 days then
	// One statement per batch, the prompt logs' two: past their TTL, then
	// past their tenant's retention.
	batches := map[string][]string{
		ports.RetainToolCalls:  {"mcp_tool_calls_retention_idx"},
		ports.RetainReviews:    {"review_runs_retention_idx"},
		ports.RetainAuditLog:   {"audit_events_tenant_at_idx"},
		ports.RetainOutbox:     {"audit_outbox_tenant_occurred_idx"},
		ports.RetainPromptLogs: {"prompt_logs_expiry_idx", "prompt_logs_retention_idx"},
	}
	for _, table := range ports.RetainedTables {
		t.Run("retention of "+table, func(t *testing.T) {
			qs := log.all(t, "DELETE FROM "+table, len(batches[table]), func() error {
				n, _, err := retention.DeleteExpired(ctx, table, longAgo, ports.RetentionCursor{}, 5000)
				if err == nil && n != 0 {
					err = fmt.Errorf("deleted %d rows at %v, want none", n, longAgo)
				}
				return err
			})
			for i, q := range qs {
				checkUsesIndex(t, planOnSystemPath(t, q), table, batches[table][i])
			}
		})
	}
	// A later batch starts at its cursor, in the middle of a tenant's
	// rows: the start is an index condition too.
	t.Run("retention of mcp_tool_calls from a cursor", func(t *testing.T) {
		after := ports.RetentionCursor{TenantID: a, At: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
		q := log.during(t, "DELETE FROM mcp_tool_calls", func() error {
			_, _, err := retention.DeleteExpired(ctx, ports.RetainToolCalls, longAgo, after, 5000)
			return err
		})
		checkUsesIndex(t, planOnSystemPath(t, q), "mcp_tool_calls", "mcp_tool_calls_retention_idx")
	})

	// The session sweep at sign-in: both sides of its OR through an index.
	t.Run("expired web sessions", func(t *testing.T) {
		sessions := postgres.NewSessions(f.db)
		at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		q := log.during(t, "DELETE FROM \"web_sessions\"", func() error {
			_, err := sessions.DeleteExpired(ctx, at.Add(-8*time.Hour), at.Add(-30*time.Minute))
			return err
		})
		checkUsesIndex(t, planOnSystemPath(t, q), "web_sessions", "web_sessions_created_idx", "web_sessions_last_seen_idx")
	})
}
