package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
)

// soak runs waves of concurrent reviews through `codelotse worker` (River
// on PostgreSQL, the real connector) with the scripted model in perReview
// mode: every review's finder calls the search tool of every loopback MCP
// server once, one per turn, then reports nothing. It prints the worker's goroutines and
// heap before, after each wave and after the last, and River's throughput
// per wave from River's own job rows.
func soak(o options, in *instance) error {
	pki, err := localpki.New("localhost")
	if err != nil {
		return err
	}
	ca := filepath.Join(in.tmp, "ca.pem")
	if err := os.WriteFile(ca, pki.CAPEM, 0o600); err != nil {
		return err
	}
	// One call per finder turn, as when the soak was first measured: each
	// call reserves 64 KiB of the run's 256 KiB budget until it returns,
	// so a fifth call at once would wait for one of the four.
	var urls, turns []string
	for i := range o.mcpServers {
		url, stop := startMCP(pki, i)
		defer stop()
		urls = append(urls, url)
		turns = append(turns, fmt.Sprintf(`{"toolCalls": [{"name": "mcp_wiki%d_search", "arguments": {"query": "session cache"}}]}`, i))
	}
	script := filepath.Join(in.tmp, "script.json")
	if err := os.WriteFile(script, []byte(`{"perReview": true,
	  "finder": [`+strings.Join(turns, ",")+`, {"content": "{\"findings\": []}"}],
	  "summary": [{"content": "Soak review."}]}`), 0o600); err != nil {
		return err
	}
	common := []string{"SSL_CERT_FILE=" + ca, "QUAVON_LLM_PROVIDER=scripted", "QUAVON_LLM_SCRIPT=" + script}
	_, apiBase, err := in.start("api", common...)
	if err != nil {
		return err
	}
	// The worker runs every review of a wave at once; its pool is sized
	// for that (docs/configuration.md: QUAVON_WORKER_CONCURRENCY).
	worker, workerBase, err := in.start("worker", append(common,
		"QUAVON_WORKER_CONCURRENCY="+strconv.Itoa(o.reviews),
		"QUAVON_DATABASE_URL="+withPool(in.dsn, 20))...)
	if err != nil {
		return err
	}
	c, err := in.tenant(apiBase)
	if err != nil {
		return err
	}
	var ids []string
	for i, url := range urls {
		id, err := allowlist(c, fmt.Sprintf("wiki%d", i), url)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	var repo struct{ ID string }
	if err := c.post("/v1/repositories", map[string]any{"name": "acme/soak", "visibility": "private"}, &repo); err != nil {
		return err
	}
	if status, err := c.do(http.MethodPut, "/v1/repositories/"+repo.ID+"/policy",
		map[string]any{"mcp": map[string]any{"mode": "on", "servers": ids, "maxCalls": len(ids)}}, nil); err != nil || status != http.StatusOK {
		return fmt.Errorf("policy: %d %v", status, err)
	}

	db, err := pgx.Connect(context.Background(), in.dsn)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())

	fmt.Printf("worker pid %d; %d waves of %d reviews, %d MCP servers each (one call per server per review); worker concurrency %d, pool 20\n",
		worker.Process.Pid, o.waves, o.reviews, o.mcpServers, o.reviews)
	time.Sleep(2 * time.Second)
	before, err := scrape(workerBase, worker.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("%-8s %6s %6s %10s %11s %11s %10s %10s %10s %9s\n", "", "done", "failed", "wall", "reviews/s", "River/s", "goroutines", "heap live", "heap objs", "RSS")
	before.print("before", "")
	for wave := 1; wave <= o.waves; wave++ {
		start := time.Now()
		res, err := runWave(c, repo.ID, o.reviews, len(ids))
		if err != nil {
			return err
		}
		wall := time.Since(start)
		river, err := riverThroughput(db, start)
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		after, err := scrape(workerBase, worker.Process.Pid)
		if err != nil {
			return err
		}
		after.print(fmt.Sprintf("wave %d", wave), fmt.Sprintf("%6d %6d %10s %11.1f %11.1f", res.done, res.failed,
			wall.Round(time.Millisecond), float64(res.done)/wall.Seconds(), river))
		if res.badStats > 0 {
			fmt.Printf("  %d reviews without %d MCP calls in their stats\n", res.badStats, len(ids))
		}
	}
	// The live heap is the one marked by the last collection, which ran
	// during a wave; an idle Go process is collected at the latest two
	// minutes after its last collection, so the idle figure waits for it.
	time.Sleep(o.settle)
	settled, err := scrape(workerBase, worker.Process.Pid)
	if err != nil {
		return err
	}
	settled.print("idle", "")
	fmt.Printf("MCP calls ok: %.0f (want %d)\n", settled.callsOK, o.waves*o.reviews*len(ids))
	return nil
}

// startMCP serves a go-sdk MCP server (stateless, 2026-07-28) over TLS on
// loopback whose search tool answers a 4 KiB text; it returns its URL.
func startMCP(pki *localpki.PKI, i int) (string, func()) {
	answer := strings.Repeat(fmt.Sprintf("Design note %d: the session cache evicts the least recently used entry. ", i), 56)
	s := mcp.NewServer(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "search",
		Description: "Search the design wiki.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	srv.StartTLS()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "https://localhost:" + port + "/mcp", srv.Close
}

// allowlist registers the server, discovers it and allowlists search.
func allowlist(c *client, name, url string) (string, error) {
	var s struct{ ID string }
	if err := c.post("/v1/mcp/servers", map[string]any{"name": name, "url": url, "auth": map[string]any{"type": "none"}, "acknowledged": true}, &s); err != nil {
		return "", err
	}
	if status, err := c.do(http.MethodPost, "/v1/mcp/servers/"+s.ID+"/discover", nil, nil); err != nil || status != http.StatusOK {
		return "", fmt.Errorf("discover %s: %d %v", name, status, err)
	}
	status, err := c.do(http.MethodPut, "/v1/mcp/servers/"+s.ID+"/tools",
		map[string]any{"tools": []any{map[string]any{"name": "search", "description": "Search the design wiki."}}}, nil)
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("allowlist %s: %d %v", name, status, err)
	}
	return s.ID, nil
}

type waveResult struct{ done, failed, badStats int }

// runWave submits n reviews at once and waits until every one is done or
// failed (at most 10 minutes).
func runWave(c *client, repoID string, n, wantCalls int) (waveResult, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r struct{ ID string }
			status, err := c.do(http.MethodPost, "/v1/repositories/"+repoID+"/reviews", map[string]any{
				"title": "Cache writes", "description": "Adds writes to the cache.",
				"diff":  "--- a/cache.go\n+++ b/cache.go\n@@ -1,2 +1,3 @@\n package cache\n+var sessions = map[string]string{}\n",
				"files": map[string]string{"cache.go": "package cache\n\nvar sessions = map[string]string{}\n"}}, &r)
			if err == nil && status != http.StatusAccepted {
				err = fmt.Errorf("POST reviews: status %d", status)
			}
			ids[i], errs[i] = r.ID, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return waveResult{}, err
		}
	}
	var res waveResult
	pending := ids
	deadline := time.Now().Add(10 * time.Minute)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%d reviews unfinished after 10 minutes", len(pending))
		}
		time.Sleep(200 * time.Millisecond)
		var still []string
		for _, id := range pending {
			var r struct {
				Status string
				Stats  struct{ Mcp struct{ Calls int } }
			}
			if _, err := c.do(http.MethodGet, "/v1/reviews/"+id, nil, &r); err != nil {
				return res, err
			}
			switch r.Status {
			case "done":
				res.done++
				if r.Stats.Mcp.Calls != wantCalls {
					res.badStats++
				}
			case "failed":
				res.failed++
			default:
				still = append(still, id)
			}
		}
		pending = still
	}
	return res, nil
}

// riverThroughput is completed review jobs per second of the jobs
// created since start, from the first attempt to the last finalisation,
// as River recorded them. River's completer records completions in
// batches, shortly after the review itself is done, so it first waits
// (at most 30 s) until every job of the wave is finalised.
func riverThroughput(db *pgx.Conn, start time.Time) (float64, error) {
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var open int
		err := db.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE kind = 'review_run' AND created_at >= $1 AND finalized_at IS NULL`, start).Scan(&open)
		if err != nil {
			return 0, err
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d review jobs not finalised 30 s after their reviews were done", open)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var n int
	var secs float64
	err := db.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM max(finalized_at) - min(attempted_at)), 0)
		FROM river_job WHERE kind = 'review_run' AND state = 'completed' AND created_at >= $1`, start).Scan(&n, &secs)
	if err != nil || secs == 0 {
		return 0, err
	}
	return float64(n) / secs, nil
}

// probe is one reading of the worker's /metrics and RSS.
type probe struct {
	goroutines, heapLive, heapObjects, callsOK float64
	rss                                        int64
}

func scrape(base string, pid int) (probe, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return probe{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return probe{}, err
	}
	var p probe
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_goroutines":
			p.goroutines = v
		case "go_gc_heap_live_bytes":
			p.heapLive = v
		case "go_memory_classes_heap_objects_bytes":
			p.heapObjects = v
		case `quavon_mcp_context_calls_total{outcome="ok"}`:
			p.callsOK = v
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			p.rss = kb << 10
		}
	}
	return p, nil
}

func (p probe) print(label, wave string) {
	if wave == "" {
		wave = fmt.Sprintf("%6s %6s %10s %11s %11s", "", "", "", "", "")
	}
	fmt.Printf("%-8s %s %10.0f %10s %10s %9s\n", label, wave, p.goroutines, mib(p.heapLive), mib(p.heapObjects), mib(float64(p.rss)))
}

func mib(b float64) string { return fmt.Sprintf("%.1fMiB", b/(1<<20)) }

// withPool sets pool_max_conns on a URL DSN.
func withPool(dsn string, n int) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "pool_max_conns=" + strconv.Itoa(n)
}
