package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// load fills the large database: the installation scaled by
// calls ÷ 10,000,000 (2,000 tenants; 20 servers per tenant at full size;
// 200,000 repositories; 2,000,000 review runs; 10,000,000 call records;
// 2,000,000 audit events; 200,000 prompt logs), half of every table's
// rows in 10 tenants (the measured tenant is one of them), half of a
// tenant's calls on one server and half of its reviews in one
// repository, timestamps spread over the 90 days before the load (prompt
// logs over the last 24 hours, each with a 24-hour TTL). Bulk servers
// carry no tool snapshots (the measured tenant's 20 are the API's).
func load(d *database, measured *side, o options, base time.Time) error {
	s := float64(o.calls) / 10_000_000
	scaled := func(full float64) int { return max(1, int(math.Round(full*s))) }
	var (
		serversPer = max(1, int(math.Round(20*s)))
		reposPer   = max(1, int(math.Round(100*s)))
		reviews    = scaled(2_000_000)
		audit      = scaled(2_000_000)
		prompts    = scaled(200_000)
	)
	const span = 90 * 24 * 3600 // seconds
	at := "timestamptz '" + base.UTC().Format(time.RFC3339Nano) + "'"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.adminDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// The rows are built with their references; foreign-key triggers off
	// (an admin-only setting) make the load several times faster.
	steps := []struct{ what, sql string }{
		{"settings", `SET session_replication_role = replica`},
		{"tenants", fmt.Sprintf(`INSERT INTO tenants (name) SELECT 'bulk-' || g FROM generate_series(1, %d) g`, o.tenants-1)},
		{"servers", fmt.Sprintf(`INSERT INTO mcp_servers (tenant_id, name, url)
			SELECT t.id, 'srv' || g, 'https://srv' || g || '.example.com/mcp'
			FROM tenants t, generate_series(1, %d) g WHERE t.name LIKE 'bulk-%%'`, serversPer)},
		{"repositories", fmt.Sprintf(`INSERT INTO repositories (tenant_id, name, visibility)
			SELECT t.id, 'org/repo-' || g, 'private'
			FROM tenants t, generate_series(1, %d) g WHERE t.name LIKE 'bulk-%%'`, reposPer)},
		// Index tables: tenant i (the measured tenant is 0, the hot ones
		// 0–9), its servers and repositories numbered from 0.
		{"index tables", `CREATE TEMP TABLE t_idx AS
			SELECT (row_number() OVER (ORDER BY t.id <> '` + measured.tenantID + `', t.id) - 1)::int AS i, t.id,
			       (SELECT count(*) FROM mcp_servers s WHERE s.tenant_id = t.id)::int
			         - (t.id = '` + measured.tenantID + `')::int AS servers,
			       (SELECT count(*) FROM repositories r WHERE r.tenant_id = t.id)::int AS repos
			FROM tenants t;
			CREATE TEMP TABLE s_idx AS SELECT t.i AS ti, (row_number() OVER (PARTITION BY s.tenant_id ORDER BY s.name) - 1)::int AS si, s.id
			FROM mcp_servers s JOIN t_idx t ON t.id = s.tenant_id;
			CREATE TEMP TABLE r_idx AS SELECT t.i AS ti, (row_number() OVER (PARTITION BY r.tenant_id ORDER BY r.name) - 1)::int AS ri, r.id
			FROM repositories r JOIN t_idx t ON t.id = r.tenant_id;
			CREATE INDEX ON s_idx (ti, si); CREATE INDEX ON r_idx (ti, ri); ANALYZE t_idx, s_idx, r_idx`},
		{"review runs", fmt.Sprintf(`INSERT INTO review_runs (tenant_id, repository_id, status, title, prompt_version, created_at, started_at, finished_at)
			SELECT t.id, r.id, 'done', 'bulk', 'bulk', at, at, at
			FROM (SELECT g, CASE WHEN g %% 2 = 0 THEN (g / 2) %% 10 ELSE (g / 2) %% %[2]d END AS ti,
			             `+at+` - make_interval(secs => (g::bigint * 7919) %% %[3]d) AS at
			      FROM generate_series(1, %[1]d) g) x
			JOIN t_idx t ON t.i = x.ti
			JOIN r_idx r ON r.ti = x.ti AND r.ri = CASE WHEN (g / 20) %% 2 = 0 THEN 0 ELSE (g / 3) %% t.repos END`, reviews, o.tenants, span)},
		{"call records", fmt.Sprintf(`INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, duration_ms, request_bytes, response_bytes, arguments_hash, created_at)
			SELECT t.id, s.id, 'search', 'ok', 120, 64, 2048, md5(g::text), at
			FROM (SELECT g, CASE WHEN g %% 2 = 0 THEN (g / 2) %% 10 ELSE (g / 2) %% %[2]d END AS ti,
			             `+at+` - make_interval(secs => (g::bigint * 7919) %% %[3]d) AS at
			      FROM generate_series(1, %[1]d) g) x
			JOIN t_idx t ON t.i = x.ti
			JOIN s_idx s ON s.ti = x.ti AND s.si = CASE WHEN (g / 20) %% 2 = 0 THEN 0 ELSE (g / 3) %% t.servers END`, o.calls, o.tenants, span)},
		{"audit events", fmt.Sprintf(`INSERT INTO audit_events (tenant_id, action, actor, target, at)
			SELECT t.id, 'server.update', 'token:bulk', 'mcp_server:bulk', `+at+` - make_interval(secs => (g::bigint * 7919) %% %[3]d)
			FROM generate_series(1, %[1]d) g
			JOIN t_idx t ON t.i = CASE WHEN g %% 2 = 0 THEN (g / 2) %% 10 ELSE (g / 2) %% %[2]d END`, audit, o.tenants, span)},
		{"prompt logs", fmt.Sprintf(`INSERT INTO prompt_logs (tenant_id, review_id, step, turn, sealed, created_at, expires_at)
			SELECT tenant_id, id, 'finder', 1, '\x00'::bytea, ts, ts + interval '24 hours'
			FROM (SELECT tenant_id, id, `+at+` - make_interval(secs => (abs(hashtext(id::text))::bigint) %% 86400) AS ts
			      FROM review_runs TABLESAMPLE SYSTEM (%[2]f) LIMIT %[1]d) x`, prompts, min(100, 200*float64(prompts)/float64(reviews)))},
	}
	for _, st := range steps {
		start := time.Now()
		if _, err := conn.Exec(ctx, st.sql); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
		fmt.Printf("  load %-14s %s\n", st.what, time.Since(start).Round(100*time.Millisecond))
	}
	return seedCommon(conn, measured)
}

// seedCommon gives the measured tenant what both databases have the same:
// one review with three calls and no prompt logs (the review routes: a
// log's sealed messages would need the key ring's real ciphertext, and
// the route's query reads one review's logs by index whatever the
// table's size), and 50 calls on each of its servers (so every calls
// page is full): recent ones, except on its last server, a cold one that
// was last called 60 days ago and that the bulk load leaves alone.
func seedCommon(conn *pgx.Conn, s *side) error {
	ctx := context.Background()
	// Read whole (GET /v1/reviews/{id}), a run has its diff.
	err := conn.QueryRow(ctx, `INSERT INTO review_runs (tenant_id, repository_id, status, title, diff, prompt_version, created_at, started_at, finished_at)
		VALUES ($1, $2, 'done', 'measured', '+measured', 'measured', now(), now(), now()) RETURNING id`, s.tenantID, s.repos[0]).Scan(&s.review)
	if err != nil {
		return err
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO mcp_tool_calls (tenant_id, server_id, review_id, tool, status, duration_ms, request_bytes, response_bytes, arguments_hash, created_at)
		  SELECT $1, $2, $3, 'search', 'ok', 120, 64, 2048, md5(g::text), now() FROM generate_series(1, 3) g`,
			[]any{s.tenantID, s.servers[0], s.review}},
		{`INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, duration_ms, request_bytes, response_bytes, arguments_hash, created_at)
		  SELECT $1, s.id, 'search', 'ok', 120, 64, 2048, md5(g::text), now() - make_interval(secs => g)
		  FROM unnest($2::uuid[]) s(id), generate_series(1, 50) g`,
			[]any{s.tenantID, s.servers[:len(s.servers)-1]}},
		{`INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, duration_ms, request_bytes, response_bytes, arguments_hash, created_at)
		  SELECT $1, $2, 'search', 'ok', 120, 64, 2048, md5(g::text), now() - make_interval(days => 60, secs => g)
		  FROM generate_series(1, 50) g`,
			[]any{s.tenantID, s.servers[len(s.servers)-1]}},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

// seedEmpty gives the empty database's measured tenant the rows both
// databases share.
func seedEmpty(d *database, s *side) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.adminDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return seedCommon(conn, s)
}
