package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/adapters/secrets"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// BenchmarkCallPipeline64KiB measures app's guarded per-call pipeline
// (mcpTool.Call: budget, strict validation, argument scan, tools/call,
// result text, 64 KiB check, result scan, redaction, 8,000-character cap,
// untrusted wrap, record) on a result just under limits.ToolResultCap,
// with the real secret scanner. mcpTool is not exported, so each
// iteration is one whole reviews.ReviewRunner.RunReview over in-memory fakes
// (store, connector, model); the per-call cost is read two ways:
//
//   - call-ns/op: the call's own duration as the pipeline records it
//     (ports.ToolCall.Duration, from the budget reservation to just before
//     the record is stored), with the real clock;
//   - the difference between a run with one call (1call/<text>) and the
//     same run whose finder makes no call (0calls): that adds the model
//     turn, the goroutine of the call and the in-memory record.
//
// nomcp is the same review with the gate closed: 0calls − nomcp is what
// the MCP context costs a run before any call (policy, server, session,
// tools/list, hash check, tool spec).
func BenchmarkCallPipeline64KiB(b *testing.B) {
	scanner, err := secrets.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("nomcp", func(b *testing.B) {
		e := newBenchEnv(b, scanner, "", false)
		e.loop(b, 0, "")
	})
	b.Run("0calls", func(b *testing.B) {
		e := newBenchEnv(b, scanner, "", true)
		e.loop(b, 0, "")
	})
	wiki, dense := benchCorpus(b, "wiki"), benchCorpus(b, "dense")
	for _, c := range []struct {
		name, text string
		status     review.CallStatus
	}{
		// The fixed cost: a 2 KiB answer.
		{"short", wiki[:strings.LastIndexByte(wiki[:2048], '\n')+1], review.CallOK},
		{"wiki", wiki, review.CallOK},
		// dense.txt holds 48 generic-api-key look-alikes (apikey = "7eJw…"),
		// so the result is dropped after the first scan (blocked);
		// dense-clean is dense.txt without those lines: keyword-dense text
		// that goes all the way (scan, redact, cap, wrap).
		{"dense", dense, review.CallBlocked},
		{"dense-clean", withoutFindings(scanner, dense), review.CallOK},
		// A result with real secrets is dropped after the first scan.
		{"planted", benchCorpus(b, "planted"), review.CallBlocked},
	} {
		b.Run("1call/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			e := newBenchEnv(b, scanner, c.text, true)
			e.loop(b, 1, c.status)
		})
	}
}

// withoutFindings drops the lines of text in which the scanner finds
// anything.
func withoutFindings(s *secrets.Scanner, text string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if len(s.Scan(line)) == 0 {
			out.WriteString(line)
		}
	}
	return out.String()
}

// benchCorpus is the secret scanner's 64 KiB test text, cut at the last
// line break before limits.ToolResultCap: just under the cap, so the
// result is scanned, redacted and wrapped rather than refused as too_large.
func benchCorpus(b *testing.B, name string) string {
	raw, err := os.ReadFile("../../adapters/secrets/testdata/" + name + ".txt")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	if len(s) >= limits.ToolResultCap {
		s = s[:limits.ToolResultCap-1]
		s = s[:strings.LastIndexByte(s, '\n')+1]
	}
	if !utf8.ValidString(s) {
		b.Fatalf("%s: not UTF-8 after trimming", name)
	}
	return s
}

const (
	benchTenant      = "aaaaaaaa-0000-4000-8000-0000000000b1"
	benchRepo        = "11111111-1111-4111-8111-1111111111b1"
	benchServer      = "51515151-0000-4000-8000-0000000000b1"
	benchReview      = "77777777-0000-4000-8000-0000000000b1"
	benchSchema      = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"space":{"type":"string","enum":["eng","ops","sales"]},"limit":{"type":"integer","default":10}},"required":["query"],"additionalProperties":false}`
	benchDescription = "Search the design wiki."
	benchArgs        = `{"query": "cache eviction policy for the session store", "space": "eng", "limit": 5}`
)

type benchEnv struct {
	deps  reviews.ReviewDeps
	calls *benchCallLog
	model *benchModel
}

// benchDefinition is the wiki's search tool as discovery stores it.
func benchDefinition(b *testing.B) tool.Definition {
	b.Helper()
	def, err := tool.NewDefinition("search", benchDescription, json.RawMessage(benchSchema), json.RawMessage(`{"readOnlyHint":true}`))
	if err != nil {
		b.Fatal(err)
	}
	return def
}

// newBenchEnv is a review whose server's session is in memory and
// answers result.
func newBenchEnv(b *testing.B, scanner ports.SecretScanner, result string, gateOpen bool) *benchEnv {
	b.Helper()
	def := benchDefinition(b)
	live := ports.ListedTool{Name: "search", Description: def.Description(), Definition: def}
	conn := benchConnector{tools: []ports.ListedTool{live}, result: ports.ToolResult{Texts: []string{result}}}
	return newBenchEnvAt(b, scanner, "https://wiki.example.com/mcp", def, conn, gateOpen)
}

// newBenchEnvAt is a review of a private repository whose policy selects
// one server, wiki at serverURL with def (the search tool) allowlisted,
// reached through conn; the store is in memory.
func newBenchEnvAt(b *testing.B, scanner ports.SecretScanner, serverURL string, def tool.Definition, conn ports.MCPConnector, gateOpen bool) *benchEnv {
	b.Helper()
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	name, _ := server.ParseName("wiki")
	u, err := server.ParseURL(serverURL)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.NewServer(benchServer, benchTenant, name, u, server.NoCredential(), true, t0)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := tool.NewSnapshot("wiki", def, "Searches the design wiki.", t0)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.ReplaceTools([]tool.Snapshot{snap}, t0); err != nil {
		b.Fatal(err)
	}
	maxCalls := limits.DefaultCallsPerRun
	section, err := policy.NewMcpSection("on", []string{benchServer}, &maxCalls)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := repository.New(benchRepo, "acme/api", policy.VisibilityPrivate)
	if err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{calls: &benchCallLog{}, model: &benchModel{}}
	tx := &benchTx{
		servers:  benchServers{srv: srv},
		repos:    benchRepos{repo: repo},
		policies: benchPolicies{section: section},
		reviews:  benchReviews{run: benchRun(b)},
		calls:    e.calls,
	}
	tx.reviews.calls = e.calls
	instance := gate.InstanceAllowed
	if !gateOpen {
		instance = gate.InstanceDisabled
	}
	e.deps = reviews.ReviewDeps{
		Tenants:   benchTenants{tx: tx},
		Connector: conn,
		Model:     e.model,
		Scanner:   scanner,
		Metrics:   benchMetrics{},
		Clock:     benchClock{},
		Rand:      rand.Reader,
		Gates:     app.Gates{SignedOff: true, Instance: instance, Edition: gate.SelfHosted},
		Warn:      func(msg string, _ map[string]string) { b.Errorf("warning: %s", msg) },
	}
	return e
}

// loop checks one run, then times b.N runs whose finder makes calls
// calls to mcp_wiki_search.
func (e *benchEnv) loop(b *testing.B, calls int, status review.CallStatus) {
	e.model.calls = calls
	runner := reviews.NewReviewRunner(e.deps)
	ctx := context.Background()
	if err := runner.RunReview(ctx, benchTenant, benchReview); err != nil {
		b.Fatal(err)
	}
	if e.calls.n != calls || calls > 0 && e.calls.last.Status != status {
		b.Fatalf("calls recorded = %d (last %+v), want %d with status %q", e.calls.n, e.calls.last, calls, status)
	}
	if status == review.CallOK && !strings.Contains(e.model.lastAnswer, "<untrusted") {
		b.Fatalf("the model did not get a wrapped answer: %.200q", e.model.lastAnswer)
	}
	e.calls.n, e.calls.total = 0, 0
	b.ReportAllocs()
	for b.Loop() {
		if err := runner.RunReview(ctx, benchTenant, benchReview); err != nil {
			b.Fatal(err)
		}
	}
	if calls > 0 {
		b.ReportMetric(float64(e.calls.total.Nanoseconds())/float64(e.calls.n), "call-ns/op")
	}
}

// --- in-memory fakes of the ports -------------------------------------------
// Each embeds its port so that a method the run must not need panics.

type benchTenants struct{ tx *benchTx }

func (t benchTenants) ReadInTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	return t.InTenant(ctx, tenantID, fn)
}

func (t benchTenants) InTenant(ctx context.Context, _ string, fn func(context.Context, ports.TenantTx) error) error {
	return fn(ctx, t.tx)
}

type benchTx struct {
	ports.TenantTx
	servers  benchServers
	repos    benchRepos
	policies benchPolicies
	reviews  benchReviews
	calls    *benchCallLog
}

func (t *benchTx) Servers() ports.ServerRepo          { return t.servers }
func (t *benchTx) Repositories() ports.RepositoryRepo { return t.repos }
func (t *benchTx) Policies() ports.PolicyRepo         { return t.policies }
func (t *benchTx) Reviews() ports.ReviewRepo          { return t.reviews }
func (t *benchTx) Calls() ports.CallLog               { return t.calls }
func (t *benchTx) Settings() ports.SettingsRepo       { return benchSettings{} }

// benchSettings: the tenant keeps no debug prompt logs (the default).
type benchSettings struct{ ports.SettingsRepo }

func (benchSettings) Get(context.Context) (settings.Settings, error) { return settings.Default(), nil }

type benchServers struct {
	ports.ServerRepo
	srv *server.Server
}

func (s benchServers) Get(context.Context, string) (*server.Server, error) { return s.srv, nil }
func (s benchServers) Credential(context.Context, string) ([]byte, error)  { return nil, nil }

type benchRepos struct {
	ports.RepositoryRepo
	repo *repository.Repository
}

func (r benchRepos) Get(context.Context, string) (*repository.Repository, error) { return r.repo, nil }

type benchPolicies struct {
	ports.PolicyRepo
	section policy.McpSection
}

func (p benchPolicies) Default(context.Context) (*policy.McpSection, error) { return nil, nil }
func (p benchPolicies) Repository(context.Context, string) (policy.McpSection, bool, error) {
	return p.section, true, nil
}

// benchRun is the queued run every iteration reviews.
func benchRun(b *testing.B) *review.Run {
	run, err := review.NewRun(benchReview, benchRepo, review.Request{Title: "Add a session cache",
		Diff: "+cache := map[string]string{}\n", Files: map[string]string{"a.go": "package a\n"}}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	return run
}

// benchReviews starts the same queued run every time and forgets the result.
type benchReviews struct {
	ports.ReviewRepo
	run   *review.Run
	calls *benchCallLog
}

// Get returns a copy of the queued run.
func (r benchReviews) Get(context.Context, string) (*review.Run, error) {
	run := *r.run
	return &run, nil
}

// Start begins a new run: the call log forgets the previous run's usage,
// so every iteration has the whole budget.
func (r benchReviews) Start(_ context.Context, run *review.Run) (time.Time, error) {
	r.calls.newRun()
	return run.StartedAt(), nil
}
func (r benchReviews) Finish(context.Context, *review.Run) error { return nil }

// benchCallLog keeps the number of records, the last one and the sum of
// their durations over all runs, and the usage of the current run (as
// adapters/postgres sums it) for the budget and the stats.
type benchCallLog struct {
	ports.CallLog
	mu    sync.Mutex
	n     int
	total time.Duration
	last  ports.ToolCall
	usage ports.ReviewUsage
}

func (c *benchCallLog) newRun() {
	c.mu.Lock()
	c.usage = ports.ReviewUsage{}
	c.mu.Unlock()
}

func (c *benchCallLog) Record(_ context.Context, tc ports.ToolCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.total += tc.Duration
	c.last = tc
	if tc.ArgumentsHash != "" && tc.Status != review.CallBudgetExhausted {
		c.usage.Reserved++
	}
	switch tc.Status {
	case review.CallOK, review.CallError:
		c.usage.Sent++
		c.usage.Bytes += min(tc.ResponseBytes, limits.CallReservation)
	case review.CallTooLarge:
		c.usage.Sent++
		c.usage.Bytes += limits.CallReservation
	case review.CallUnavailable:
		c.usage.Sent++
	case review.CallBlocked:
		c.usage.Blocked++
	}
	return nil
}

func (c *benchCallLog) ReviewUsage(context.Context, string) (ports.ReviewUsage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage, nil
}

type benchConnector struct {
	tools  []ports.ListedTool
	result ports.ToolResult
}

func (c benchConnector) Open(context.Context, ports.MCPTarget, int64) (ports.MCPSession, error) {
	return benchSession(c), nil
}

type benchSession benchConnector

func (s benchSession) ListTTL() time.Duration { return 0 }

func (s benchSession) ListTools(context.Context) ([]ports.ListedTool, error) { return s.tools, nil }
func (s benchSession) CallTool(context.Context, string, tool.Arguments) (ports.ToolResult, error) {
	return s.result, nil
}
func (s benchSession) Close() error { return nil }

// benchModel is a scripted model: the finder calls mcp_wiki_search calls
// times (one call per turn) and then reports nothing, so the verifier is
// skipped; the summary answers at once.
type benchModel struct {
	calls      int
	lastAnswer string
}

func (m *benchModel) Complete(_ context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	if req.Step != ports.StepFinder {
		return ports.ModelResponse{Content: "Nothing to report."}, nil
	}
	made := 0
	for _, msg := range req.Messages {
		if msg.Role == ports.RoleTool {
			made++
			m.lastAnswer = msg.Content
		}
	}
	if made < m.calls {
		return ports.ModelResponse{ToolCalls: []ports.ModelToolCall{{ID: "c", Name: "mcp_wiki_search", Arguments: json.RawMessage(benchArgs)}}}, nil
	}
	return ports.ModelResponse{Content: `{"findings": []}`}, nil
}

type benchMetrics struct{}

func (benchMetrics) McpCall(review.CallStatus) {}

type benchClock struct{}

func (benchClock) Now() time.Time { return time.Now() }
