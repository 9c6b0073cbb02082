// Command scalebench measures CodeLotse with the data of a large
// installation (docs/BENCHMARKS.md, "Data scale"): it loads a
// database at a configurable size, then prints
//
//   - for every tenant-scoped GET route of the API, p50 and p99 against the
//     large database and against an empty one, requests interleaved one
//     by one between the two (`codelotse api` on each);
//   - the hourly retention run's time with little expired;
//   - the rows per second of a 30-day retention backlog, per table.
//
// Both databases belong to a role that is not a superuser and lacks
// BYPASSRLS, created as docs/operations.md tells operators ("The database role"),
// and the service, the migrations and the retention job connect as it.
// The retention job is the application's own (app/operations with
// adapters/postgres), run in this process on that role's connection with
// an injected clock. Only the bulk load runs as the admin role, with
// foreign-key triggers off (the loader builds every reference itself).
//
// Run it with `make scalebench` (SCALEBENCH_FLAGS='-calls 10000000' for
// the full size).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/ports"
)

type options struct {
	repo                  string
	tenants, calls        int
	requests, rounds      int
	keep                  bool
	backlogDays           int
	skipRoutes, skipClean bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	flag.StringVar(&o.repo, "repo", "..", "the repository's root (the binary is built from it)")
	flag.IntVar(&o.tenants, "tenants", 2000, "tenants")
	flag.IntVar(&o.calls, "calls", 2_000_000, "call records; every other table is sized in proportion (the issue's installation: 10,000,000)")
	flag.IntVar(&o.requests, "requests", 300, "requests per route, database and round")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds over every route")
	flag.IntVar(&o.backlogDays, "backlog-days", 30, "days of the retention backlog")
	flag.BoolVar(&o.skipRoutes, "skip-routes", false, "measure retention only")
	flag.BoolVar(&o.keep, "keep", false, "keep the databases and roles (prints their DSNs)")
	flag.Parse()
	if o.tenants < 10 || o.calls < 100_000 {
		return fmt.Errorf("-tenants must be at least 10 and -calls at least 100,000")
	}

	tmp, err := os.MkdirTemp("", "codelotse-scalebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "codelotse")
	build := exec.Command("go", "build", "-tags", "signedoff", "-o", bin, "./cmd/codelotse")
	build.Dir, build.Stdout, build.Stderr = o.repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}

	admin := adminDSN()
	suffix := randomHex(4)
	large, err := newDatabase(admin, "codelotse_scale_large_"+suffix)
	if err != nil {
		return err
	}
	empty, err := newDatabase(admin, "codelotse_scale_empty_"+suffix)
	if err != nil {
		large.drop()
		return err
	}
	if o.keep {
		fmt.Printf("keeping %s and %s\n", large.dsn, empty.dsn)
	} else {
		defer large.drop()
		defer empty.drop()
	}

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	env := []string{
		"QUAVON_MCP_CONTEXT=allowed",
		"QUAVON_MCP_PRIVATE_HOSTS=localhost",
		"QUAVON_ENCRYPTION_KEYS=k1:" + base64.StdEncoding.EncodeToString(key),
		"QUAVON_LOG_LEVEL=warn",
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}()
	var sides [2]*side
	for i, db := range []*database{large, empty} {
		s := &side{db: db, bin: bin, env: append(append(os.Environ(), env...), "QUAVON_DATABASE_URL="+db.dsn)}
		if _, err := s.cli("migrate"); err != nil {
			return err
		}
		p, err := s.startAPI(tmp)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		if err := s.seedTenant(); err != nil {
			return err
		}
		sides[i] = s
	}

	start := time.Now()
	base := start.Truncate(time.Second)
	if err := load(large, sides[0], o, base); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	fmt.Printf("loaded in %s: %s\n", time.Since(start).Round(time.Second), large.counts())
	if err := seedEmpty(empty, sides[1]); err != nil {
		return fmt.Errorf("seed the empty database: %w", err)
	}
	start = time.Now()
	if err := large.admin("VACUUM (ANALYZE)"); err != nil {
		return err
	}
	if err := empty.admin("VACUUM (ANALYZE)"); err != nil {
		return err
	}
	fmt.Printf("VACUUM (ANALYZE) in %s\n", time.Since(start).Round(time.Second))
	fmt.Println(large.sizes())
	// What the migration of the paging indexes costs on this data: each
	// index built again under another name, then dropped.
	for _, ix := range []string{
		"mcp_tool_calls (tenant_id, server_id, created_at DESC, id DESC)",
		"mcp_tool_calls (tenant_id, review_id, created_at, id)",
		"review_runs (tenant_id, repository_id, created_at DESC, id DESC)",
	} {
		start := time.Now()
		if err := large.admin("CREATE INDEX scalebench_build_idx ON "+ix, "DROP INDEX scalebench_build_idx"); err != nil {
			return err
		}
		fmt.Printf("index build %-55s %s\n", ix, time.Since(start).Round(10*time.Millisecond))
	}

	if !o.skipRoutes {
		if err := routes(sides, o); err != nil {
			return err
		}
	}
	return retention(large, o, base)
}

// database is a database of its own, owned by a role of its own.
type database struct {
	adminDSN, name, dsn string
}

// newDatabase creates the owner role and its database as
// docs/operations.md tells operators: a login role, not a superuser, without BYPASSRLS,
// with CREATEROLE (the first migration creates codelotse_tenant when the
// cluster has none), owning the database.
func newDatabase(admin, name string) (*database, error) {
	password := randomHex(16)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connect as the admin role: %w", err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB CREATEROLE PASSWORD '%s'", name, password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, name),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Replace(q, password, "…", 1), err)
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	adminOnDB := u.String()
	u.User = url.UserPassword(name, password)
	return &database{adminDSN: adminOnDB, name: name, dsn: u.String()}, nil
}

func (d *database) drop() {
	ctx := context.Background()
	u, _ := url.Parse(d.adminDSN)
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalebench: drop:", err)
		return
	}
	defer conn.Close(ctx)
	for _, q := range []string{"DROP DATABASE IF EXISTS " + d.name + " WITH (FORCE)", "DROP ROLE IF EXISTS " + d.name} {
		if _, err := conn.Exec(ctx, q); err != nil {
			fmt.Fprintln(os.Stderr, "scalebench:", q+":", err)
		}
	}
}

// admin runs statements on the database as the admin role.
func (d *database) admin(stmts ...string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.adminDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%.200s: %w", q, err)
		}
	}
	return nil
}

// query returns the first column of the first row of q, as the admin.
func (d *database) query(q string) string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.adminDSN)
	if err != nil {
		return err.Error()
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
		return err.Error()
	}
	return s
}

var tables = []string{"tenants", "mcp_servers", "repositories", "review_runs", "mcp_tool_calls", "audit_events", "prompt_logs"}

func (d *database) counts() string {
	var parts []string
	for _, t := range tables {
		parts = append(parts, t+" "+d.query("SELECT to_char(count(*), 'FM999,999,999') FROM "+t))
	}
	return strings.Join(parts, ", ")
}

func (d *database) sizes() string {
	return "sizes (table, then each index):\n" + d.query(`
		SELECT string_agg(line, E'\n' ORDER BY line) FROM (
		  SELECT format('  %-16s %8s  %s', c.relname, pg_size_pretty(pg_table_size(c.oid)),
		         (SELECT string_agg(format('%s %s', i.relname, pg_size_pretty(pg_relation_size(i.oid))), ', ' ORDER BY i.relname)
		          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid)) AS line
		  FROM pg_class c WHERE c.relname IN ('`+strings.Join(tables, "','")+`') AND c.relkind = 'r') l`)
}

// side is one API instance on one database, with the measured tenant.
type side struct {
	db       *database
	bin      string
	env      []string
	base     string
	token    string
	tenantID string
	servers  []string
	repos    []string
	review   string
}

func (s *side) cli(args ...string) (string, error) {
	c := exec.Command(s.bin, args...)
	c.Env = s.env
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("codelotse %s: %w: %s", args[0], err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func (s *side) startAPI(tmp string) (*exec.Cmd, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(tmp, s.db.name+".log"))
	if err != nil {
		return nil, err
	}
	p := exec.Command(s.bin, "api")
	p.Env = append(append([]string(nil), s.env...), "QUAVON_HTTP_ADDR="+addr)
	p.Stdout, p.Stderr = logFile, logFile
	if err := p.Start(); err != nil {
		return nil, err
	}
	s.base = "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
	}
	return p, fmt.Errorf("%s not ready after 30 s", s.base)
}

// seedTenant creates the measured tenant through the CLI and the API, the
// same on both sides: 20 servers and 60 repositories.
func (s *side) seedTenant() error {
	var err error
	if s.tenantID, err = s.cli("tenants", "create", "--name", "measured"); err != nil {
		return err
	}
	if s.token, err = s.cli("tokens", "create", "--tenant", s.tenantID, "--permissions", "tenant:manage,repo:manage"); err != nil {
		return err
	}
	for i := range 20 {
		var out struct{ ID string }
		body := map[string]any{"name": fmt.Sprintf("srv%02d", i), "url": fmt.Sprintf("https://localhost:%d/mcp", 40000+i),
			"auth": map[string]any{"type": "bearer", "token": fmt.Sprintf("scale-bench-token-%02d", i)}, "acknowledged": true}
		if err := s.post("/v1/mcp/servers", body, &out); err != nil {
			return err
		}
		s.servers = append(s.servers, out.ID)
	}
	for i := range 60 {
		var out struct{ ID string }
		if err := s.post("/v1/repositories", map[string]any{"name": fmt.Sprintf("acme/repo-%03d", i), "visibility": "private"}, &out); err != nil {
			return err
		}
		s.repos = append(s.repos, out.ID)
	}
	return nil
}

func (s *side) post(path string, in, out any) error {
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, s.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}

// get times one GET; a status other than 200 is an error.
func (s *side) get(path string) (time.Duration, error) {
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("GET %s: %d", path, resp.StatusCode)
	}
	return d, nil
}

// routes times every tenant-scoped GET route on both sides, one request
// on the large database, the same request on the empty one, and so on.
func routes(sides [2]*side, o options) error {
	type route struct {
		name  string
		paths func(s *side, i int) string
	}
	rs := []route{
		{"GET /v1/mcp/status", func(*side, int) string { return "/v1/mcp/status" }},
		{"GET /v1/mcp/servers", func(*side, int) string { return "/v1/mcp/servers" }},
		{"GET /v1/mcp/servers/{id}", func(s *side, i int) string { return "/v1/mcp/servers/" + s.servers[i%len(s.servers)] }},
		{"GET /v1/mcp/servers/{id}/calls (hot server)", func(s *side, _ int) string { return "/v1/mcp/servers/" + s.servers[0] + "/calls" }},
		{"GET /v1/mcp/servers/{id}/calls (any server)", func(s *side, i int) string { return "/v1/mcp/servers/" + s.servers[i%len(s.servers)] + "/calls" }},
		{"GET /v1/mcp/servers/{id}/calls (cold server)", func(s *side, _ int) string {
			return "/v1/mcp/servers/" + s.servers[len(s.servers)-1] + "/calls"
		}},
		{"GET /v1/mcp/defaults", func(*side, int) string { return "/v1/mcp/defaults" }},
		{"GET /v1/repositories", func(*side, int) string { return "/v1/repositories" }},
		{"GET /v1/repositories/{id}", func(s *side, i int) string { return "/v1/repositories/" + s.repos[i%len(s.repos)] }},
		{"GET /v1/repositories/{id}/policy", func(s *side, i int) string { return "/v1/repositories/" + s.repos[i%len(s.repos)] + "/policy" }},
		{"GET /v1/reviews/{id}", func(s *side, _ int) string { return "/v1/reviews/" + s.review }},
		{"GET /v1/reviews/{id}/prompts", func(s *side, _ int) string { return "/v1/reviews/" + s.review + "/prompts" }},
		{"GET /v1/audit?limit=50", func(*side, int) string { return "/v1/audit?limit=50" }},
		{"GET /v1/tenant/settings", func(*side, int) string { return "/v1/tenant/settings" }},
	}
	type sample struct{ large, empty []time.Duration }
	all := make([]sample, len(rs))
	for round := 1; round <= o.rounds; round++ {
		for ri, r := range rs {
			for i := range o.requests + 20 {
				for si, s := range sides {
					d, err := s.get(r.paths(s, i))
					if err != nil {
						return err
					}
					if i < 20 { // warm-up
						continue
					}
					if si == 0 {
						all[ri].large = append(all[ri].large, d)
					} else {
						all[ri].empty = append(all[ri].empty, d)
					}
				}
			}
		}
	}
	fmt.Printf("\nGET routes, %d rounds × %d requests per database, interleaved request by request (ms)\n", o.rounds, o.requests)
	fmt.Printf("%-46s %9s %9s %9s %9s %8s %8s\n", "route", "large p50", "empty p50", "large p99", "empty p99", "p50 ×", "p99 ×")
	for ri, r := range rs {
		l50, e50 := pct(all[ri].large, 50), pct(all[ri].empty, 50)
		l99, e99 := pct(all[ri].large, 99), pct(all[ri].empty, 99)
		fmt.Printf("%-46s %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f\n", r.name, ms(l50), ms(e50), ms(l99), ms(e99), ms(l50)/ms(e50), ms(l99)/ms(e99))
	}
	return nil
}

func pct(v []time.Duration, p int) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timedRetention times each table's batches of the real store.
type timedRetention struct {
	ports.Retention
	took    map[string]time.Duration
	batches map[string]int
}

func (r *timedRetention) DeleteExpired(ctx context.Context, table string, now time.Time, after ports.RetentionCursor, limit int) (int64, ports.RetentionCursor, error) {
	start := time.Now()
	n, next, err := r.Retention.DeleteExpired(ctx, table, now, after, limit)
	r.took[table] += time.Since(start)
	r.batches[table]++
	return n, next, err
}

type discard struct{}

func (discard) RetentionDeleted(string, int64) {}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// retention runs the application's retention job as the owner role:
// the hourly run an hour after the load (little expired), then a run
// with every tenant's retention shortened by the backlog's days.
func retention(large *database, o options, loadedAt time.Time) error {
	ctx := context.Background()
	db, closeDB, err := postgres.Open(ctx, large.dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	runJob := func(label string, at time.Time) error {
		store := &timedRetention{Retention: postgres.NewRetention(db), took: map[string]time.Duration{}, batches: map[string]int{}}
		start := time.Now()
		deleted, err := operations.NewRetentionJob(store, discard{}, fixedClock{at}).Run(ctx)
		total := time.Since(start)
		if err != nil {
			return err
		}
		fmt.Printf("\n%s: %s in total\n", label, total.Round(time.Millisecond))
		fmt.Printf("%-16s %10s %8s %10s %12s\n", "table", "deleted", "batches", "time", "rows/s")
		for _, t := range ports.RetainedTables {
			rate := float64(deleted[t]) / store.took[t].Seconds()
			fmt.Printf("%-16s %10d %8d %10s %12.0f\n", t, deleted[t], store.batches[t], store.took[t].Round(time.Millisecond), rate)
		}
		return nil
	}
	// The load spread the rows over the 90 days before loadedAt: an hour
	// later, the rows of one hour have expired.
	if err := runJob("hourly retention run, little expired", loadedAt.Add(time.Hour)); err != nil {
		return err
	}
	if err := large.admin(fmt.Sprintf("UPDATE tenants SET retention_days = %d", 90-o.backlogDays)); err != nil {
		return err
	}
	return runJob(fmt.Sprintf("retention backlog of %d days", o.backlogDays), loadedAt.Add(time.Hour))
}

func adminDSN() string {
	for _, v := range []string{"QUAVON_TEST_DATABASE_URL", "QUAVON_DATABASE_URL"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
