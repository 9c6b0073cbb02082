// Command loadtest measures the API's GET routes at fixed arrival rates
// (`make loadtest`; docs/BENCHMARKS.md). It builds the real binary (the
// signed-off build, so that MCP servers can be registered), migrates a
// fresh database, starts `codelotse api` on a free loopback port, creates
// a tenant, a token, repositories and MCP servers, and then drives each
// route at each rate with vegeta's constant-rate attacker, printing
// p50/p90/p99/max latency, errors and the API process's CPU time per
// request. The database is dropped at the end. With -soak it runs the
// worker soak instead (`make soak`, soak.go).
//
// It is a module of its own so that vegeta stays out of the service's
// dependencies.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

type options struct {
	soak     bool
	repo     string
	duration time.Duration
	warmup   time.Duration
	rates    []int
	rounds   int
	servers  int
	repos    int
	logLevel string
	only     string

	reviews, waves, mcpServers int
	settle                     time.Duration
}

func parseOptions() (options, error) {
	var o options
	rates := flag.String("rates", "500,1000", "arrival rates in requests per second, comma-separated")
	flag.BoolVar(&o.soak, "soak", false, "run the worker soak instead of the API load (soak.go)")
	flag.IntVar(&o.reviews, "reviews", 100, "soak: reviews submitted at once per wave")
	flag.IntVar(&o.waves, "waves", 3, "soak: waves of reviews")
	flag.IntVar(&o.mcpServers, "mcp-servers", 5, "soak: loopback MCP servers, each called once per review")
	flag.DurationVar(&o.settle, "settle", 125*time.Second, "soak: idle time after the last wave before the last reading (the runtime collects an idle heap after 2 minutes)")
	flag.StringVar(&o.repo, "repo", "..", "the repository's root")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per route and rate")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured time at the same rate before each measurement")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds over every route and rate (interleaved)")
	flag.IntVar(&o.servers, "servers", 20, "MCP servers to register (at most 20 per tenant)")
	flag.IntVar(&o.repos, "repos", 1000, "repositories to create")
	flag.StringVar(&o.logLevel, "log-level", "info", "QUAVON_LOG_LEVEL of the API")
	flag.StringVar(&o.only, "only", "", "drive only the routes whose path contains this text (for profiling)")
	flag.Parse()
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 {
			return o, fmt.Errorf("bad rate %q", f)
		}
		o.rates = append(o.rates, r)
	}
	return o, nil
}

func run() error {
	o, err := parseOptions()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "codelotse-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	adminDSN, dsn, dbName, err := freshDSN()
	if err != nil {
		return err
	}
	defer dropDatabase(adminDSN, dbName)
	in, err := newInstance(o, tmp, dsn)
	if err != nil {
		return err
	}
	defer in.stop()
	if o.soak {
		return soak(o, in)
	}
	return loadAPI(o, in)
}

// instance is the built binary, its environment and the processes it
// started.
type instance struct {
	bin, tmp, dsn string
	env           []string
	procs         []*exec.Cmd
}

// newInstance builds the signed-off binary, migrates the fresh database
// and prepares the environment of an instance that allows MCP context
// with localhost as a private host.
func newInstance(o options, tmp, dsn string) (*instance, error) {
	in := &instance{bin: filepath.Join(tmp, "codelotse"), tmp: tmp, dsn: dsn}
	build := exec.Command("go", "build", "-tags", "signedoff", "-o", in.bin, "./cmd/codelotse")
	build.Dir, build.Stdout, build.Stderr = o.repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	in.env = append(os.Environ(),
		"QUAVON_DATABASE_URL="+dsn,
		"QUAVON_MCP_CONTEXT=allowed",
		"QUAVON_MCP_PRIVATE_HOSTS=localhost",
		"QUAVON_ENCRYPTION_KEYS=k1:"+base64.StdEncoding.EncodeToString(key),
		"QUAVON_LOG_LEVEL="+o.logLevel,
	)
	if _, err := in.cli("migrate", "--create-database"); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *instance) cli(args ...string) (string, error) {
	c := exec.Command(in.bin, args...)
	c.Env = in.env
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("codelotse %s: %w: %s", args[0], err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// tenant creates a tenant and a token with both permissions and returns a
// client for base with that token.
func (in *instance) tenant(base string) (*client, error) {
	tenant, err := in.cli("tenants", "create", "--name", "load")
	if err != nil {
		return nil, err
	}
	token, err := in.cli("tokens", "create", "--tenant", tenant, "--permissions", "tenant:manage,repo:manage")
	if err != nil {
		return nil, err
	}
	return &client{base: base, token: token}, nil
}

// start runs `codelotse command` on a free loopback address with extra
// environment, logging to a file, and waits until it is ready. It
// returns the process and its base URL.
func (in *instance) start(command string, extraEnv ...string) (*exec.Cmd, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	logFile, err := os.Create(filepath.Join(in.tmp, command+".log"))
	if err != nil {
		return nil, "", err
	}
	p := exec.Command(in.bin, command)
	p.Env = append(append(append([]string(nil), in.env...), "QUAVON_HTTP_ADDR="+addr), extraEnv...)
	p.Stdout, p.Stderr = logFile, logFile
	if err := p.Start(); err != nil {
		logFile.Close()
		return nil, "", err
	}
	in.procs = append(in.procs, p)
	base := "http://" + addr
	if err := waitReady(base + "/readyz"); err != nil {
		return nil, "", err
	}
	return p, base, nil
}

// stop ends every process it started with SIGTERM and waits for them.
func (in *instance) stop() {
	for _, p := range in.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
	}
}

// loadAPI drives the GET routes of `codelotse api` at fixed rates.
func loadAPI(o options, in *instance) error {
	api, base, err := in.start("api")
	if err != nil {
		return err
	}
	c, err := in.tenant(base)
	if err != nil {
		return err
	}
	var repoIDs []string
	for i := range o.repos {
		var r struct{ ID string }
		if err := c.post("/v1/repositories", map[string]any{"name": fmt.Sprintf("acme/repo-%03d", i), "visibility": "private"}, &r); err != nil {
			return err
		}
		repoIDs = append(repoIDs, r.ID)
	}
	for i := range o.servers {
		body := map[string]any{"name": fmt.Sprintf("srv%02d", i), "url": fmt.Sprintf("https://localhost:%d/mcp", 40000+i),
			"auth": map[string]any{"type": "bearer", "token": "load-test-token-" + strconv.Itoa(i)}, "acknowledged": true}
		if err := c.post("/v1/mcp/servers", body, nil); err != nil {
			return err
		}
	}

	// Each route is a list of paths the attack cycles through: the
	// single-repository route visits every repository, as traffic of many
	// users would, rather than one id over and over.
	routes := [][]string{{"/v1/repositories"}, {"/v1/mcp/servers"}, {"/v1/mcp/status"}}
	if status, err := c.get(routes[0][0]); err != nil || status != http.StatusOK {
		fmt.Printf("note: GET /v1/repositories answers %d (%v); driving GET /v1/repositories/{id} over the %d repositories instead\n", status, err, len(repoIDs))
		routes[0] = nil
		for _, id := range repoIDs {
			routes[0] = append(routes[0], "/v1/repositories/"+id)
		}
	}
	for _, r := range routes {
		if status, err := c.get(r[0]); err != nil || status != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v", r[0], status, err)
		}
	}
	routes = slices.DeleteFunc(routes, func(r []string) bool { return !strings.Contains(r[0], o.only) })

	fmt.Printf("API pid %d on %s; %d repositories, %d servers; %d round(s) of %s per route and rate after %s warm-up; GOMAXPROCS of the API: default (%d CPUs)\n",
		api.Process.Pid, base, o.repos, o.servers, o.rounds, o.duration, o.warmup, runtime.NumCPU())
	fmt.Printf("%-5s %-28s %6s %7s %8s %8s %8s %8s %8s %7s %9s\n", "round", "route", "rate", "reqs", "success", "p50", "p90", "p99", "max", "errors", "cpu/req")
	var all []row
	for round := 1; round <= o.rounds; round++ {
		for _, rate := range o.rates {
			for _, route := range routes {
				attack(c, route, rate, o.warmup)
				before, err := cpuTime(api.Process.Pid)
				if err != nil {
					return err
				}
				m := attack(c, route, rate, o.duration)
				after, err := cpuTime(api.Process.Pid)
				if err != nil {
					return err
				}
				r := row{round: round, route: label(route[0]), rate: rate, m: m, cpu: (after - before) / time.Duration(max(m.Requests, 1))}
				all = append(all, r)
				r.print()
			}
		}
	}
	summarise(all)
	return nil
}

// row is one measurement.
type row struct {
	round int
	route string
	rate  int
	m     *vegeta.Metrics
	cpu   time.Duration
}

func (r row) print() {
	fmt.Printf("%-5d %-28s %6d %7d %7.2f%% %8s %8s %8s %8s %7d %9s\n", r.round, r.route, r.rate, r.m.Requests,
		100*r.m.Success, ms(r.m.Latencies.P50), ms(r.m.Latencies.P90), ms(r.m.Latencies.P99), ms(r.m.Latencies.Max),
		failed(r.m), us(r.cpu))
	for _, e := range r.m.Errors {
		fmt.Printf("      error: %s\n", e)
	}
}

// failed counts the responses that were not 2xx (transport errors
// included).
func failed(m *vegeta.Metrics) int {
	return int(math.Round(float64(m.Requests) * (1 - m.Success)))
}

// summarise prints, per route and rate, the median and the range over
// the rounds of p99 and of the CPU time per request.
func summarise(rows []row) {
	type key struct {
		route string
		rate  int
	}
	var keys []key
	groups := map[key][]row{}
	for _, r := range rows {
		k := key{r.route, r.rate}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	fmt.Printf("\nsummary over rounds: median (min–max)\n%-28s %6s %26s %26s %26s\n", "route", "rate", "p50", "p99", "cpu/req")
	for _, k := range keys {
		g := groups[k]
		pick := func(f func(row) time.Duration, unit func(time.Duration) string) string {
			v := make([]time.Duration, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			slices.Sort(v)
			return fmt.Sprintf("%s (%s–%s)", unit(median(v)), unit(v[0]), unit(v[len(v)-1]))
		}
		fmt.Printf("%-28s %6d %26s %26s %26s\n", k.route, k.rate,
			pick(func(r row) time.Duration { return r.m.Latencies.P50 }, ms),
			pick(func(r row) time.Duration { return r.m.Latencies.P99 }, ms),
			pick(func(r row) time.Duration { return r.cpu }, us))
	}
}

func median(v []time.Duration) time.Duration {
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// label names a route without the repository's id.
func label(route string) string {
	if strings.HasPrefix(route, "/v1/repositories/") {
		return "/v1/repositories/{id}"
	}
	return route
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }

// attack sends GET to the paths, in turn, at rate for d and returns the
// closed metrics.
func attack(c *client, paths []string, rate int, d time.Duration) *vegeta.Metrics {
	header := http.Header{"Authorization": {"Bearer " + c.token}}
	targets := make([]vegeta.Target, len(paths))
	for i, p := range paths {
		targets[i] = vegeta.Target{Method: http.MethodGet, URL: c.base + p, Header: header}
	}
	attacker := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	for res := range attacker.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{Freq: rate, Per: time.Second}, d, paths[0]) {
		m.Add(res)
	}
	m.Close()
	return &m
}

// cpuTime is the user plus system CPU time of process pid so far, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s, the value
// of USER_HZ on Linux).
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	rest := string(raw[bytes.LastIndexByte(raw, ')')+2:])
	f := strings.Fields(rest) // f[0] is field 3
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// client talks to the API with the token.
type client struct {
	base, token string
}

func (c *client) do(method, path string, in, out any) (int, error) {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequest(method, c.base+path, &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode, nil
}

func (c *client) post(path string, in, out any) error {
	status, err := c.do(http.MethodPost, path, in, out)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("POST %s: status %d", path, status)
	}
	return err
}

func (c *client) get(path string) (int, error) { return c.do(http.MethodGet, path, nil, nil) }

func waitReady(u string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after 30 s", u)
}

// freeAddr is a loopback address with a port free at the time of asking.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// freshDSN names a new database on the server of the admin DSN
// (QUAVON_TEST_DATABASE_URL, else QUAVON_DATABASE_URL, else the local
// PostgreSQL), which `codelotse migrate --create-database` creates.
func freshDSN() (admin, dsn, name string, err error) {
	admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	for _, v := range []string{"QUAVON_TEST_DATABASE_URL", "QUAVON_DATABASE_URL"} {
		if s := os.Getenv(v); s != "" {
			admin = s
			break
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", "", "", fmt.Errorf("admin DSN: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name = "codelotse_load_" + hex.EncodeToString(b)
	u.Path = "/" + name
	return admin, u.String(), name, nil
}

func dropDatabase(admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest: drop database:", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest: drop database:", err)
	}
}
