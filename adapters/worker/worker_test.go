package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/uptrace/bun"
	"go.uber.org/goleak"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/adapters/worker"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/porttest"
)

// wait bounds every wait of these tests. Leader election, the rescuer and
// River's scheduler (5 s) set the pace.
const wait = 30 * time.Second

var newID = porttest.NewID

// env is a migrated database with a tenant and a repository.
type env struct {
	db      *postgres.DB
	tenants *postgres.Tenants
	tenant  string
	repo    string
}

func newEnv(t *testing.T) env {
	t.Helper()
	return newEnvOn(t, pgtest.New(t))
}

// newEnvOn is newEnv on an open database.
func newEnvOn(t *testing.T, db *postgres.DB) env {
	t.Helper()
	e := env{db: db, tenants: postgres.NewTenants(db), repo: newID(t)}
	var err error
	if e.tenant, err = postgres.NewAccounts(db).CreateTenant(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	err = e.tenants.InTenant(t.Context(), e.tenant, func(ctx context.Context, tx ports.TenantTx) error {
		r, err := repository.New(e.repo, "acme/api", policy.VisibilityPrivate)
		if err != nil {
			return err
		}
		return tx.Repositories().Insert(ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// enqueue stores a review run, which enqueues its job, and returns its id.
func (e env) enqueue(t *testing.T) string {
	t.Helper()
	id := newID(t)
	e.enqueueID(t, id)
	return id
}

// enqueueID stores the review run id, which enqueues its job.
func (e env) enqueueID(t *testing.T, id string) {
	t.Helper()
	run, err := review.NewRun(id, e.repo, review.Request{Title: "t", Diff: "+x\n"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = e.tenants.InTenant(t.Context(), e.tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Insert(ctx, run)
	})
	if err != nil {
		t.Fatalf("Insert review: %v", err)
	}
}

// job returns the state and attempt of the review's job.
func (e env) job(t *testing.T, reviewID string) (state string, attempt int) {
	t.Helper()
	err := e.db.Bun().NewRaw("SELECT state, attempt FROM river_job WHERE kind = ? AND args ->> 'reviewId' = ?",
		worker.ReviewJobKind, reviewID).Scan(context.Background(), &state, &attempt)
	if err != nil {
		t.Fatalf("read job of %s: %v", reviewID, err)
	}
	return state, attempt
}

func (e env) waitJob(t *testing.T, reviewID, wantState string) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		state, attempt := e.job(t, reviewID)
		if state == wantState {
			return attempt
		}
		if time.Now().After(deadline) {
			t.Fatalf("job of %s is %s (attempt %d), want %s", reviewID, state, attempt, wantState)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call is one call of the fake handler.
type call struct {
	method, tenant, review string
}

// handler is a fake ReviewHandler: run decides what RunReview does.
type handler struct {
	run func(ctx context.Context) error

	mu    sync.Mutex
	calls []call
	seen  chan call
}

func newHandler(run func(ctx context.Context) error) *handler {
	return &handler{run: run, seen: make(chan call, 100)}
}

func (h *handler) record(c call) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	h.seen <- c
}

func (h *handler) RunReview(ctx context.Context, tenantID, reviewID string) error {
	h.record(call{"run", tenantID, reviewID})
	if h.run == nil {
		return nil
	}
	return h.run(ctx)
}

func (h *handler) FailReview(_ context.Context, tenantID, reviewID string) error {
	h.record(call{"fail", tenantID, reviewID})
	return nil
}

func (h *handler) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-h.seen:
		return c
	case <-time.After(wait):
		t.Fatal("no handler call")
		return call{}
	}
}

func (h *handler) all() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]call(nil), h.calls...)
}

// start runs a worker until the test ends (or stop is called) and checks
// that Run returned nil and left no goroutine behind (but those ignored).
func start(t *testing.T, e env, h worker.ReviewHandler, opts worker.Options, ignored ...goleak.Option) (stop func() error) {
	t.Helper()
	ignored = append(ignored, goleak.IgnoreCurrent())
	w, err := worker.New(e.db.Pool(), h, zerolog.New(zerolog.NewTestWriter(t)), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(2 * wait):
				t.Fatal("Run did not return")
			}
			goleak.VerifyNone(t, ignored...)
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	return stop
}

func TestRunsEnqueuedReview(t *testing.T) {
	e := newEnv(t)
	h := newHandler(nil)
	start(t, e, h, worker.Options{Workers: 2})

	id := e.enqueue(t)
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("handler call = %+v, want %+v", got, want)
	}
	if attempt := e.waitJob(t, id, "completed"); attempt != 1 {
		t.Errorf("completed after %d attempts, want 1", attempt)
	}
	if got := h.all(); len(got) != 1 {
		t.Errorf("handler calls = %+v, want one RunReview", got)
	}
}

func TestFailsRunAfterLastAttempt(t *testing.T) {
	e := newEnv(t)
	h := newHandler(func(context.Context) error { return errors.New("model unavailable") })
	start(t, e, h, worker.Options{MaxAttempts: 3, RetryBackoff: 10 * time.Millisecond})

	id := e.enqueue(t)
	want := []call{{"run", e.tenant, id}, {"run", e.tenant, id}, {"run", e.tenant, id}, {"fail", e.tenant, id}}
	for i, w := range want {
		if got := h.next(t); got != w {
			t.Fatalf("call %d = %+v, want %+v", i, got, w)
		}
	}
	if attempt := e.waitJob(t, id, "cancelled"); attempt != 3 {
		t.Errorf("job finalised after %d attempts, want 3", attempt)
	}
	time.Sleep(200 * time.Millisecond)
	if got := h.all(); len(got) != len(want) {
		t.Errorf("handler calls = %+v, want %+v", got, want)
	}
}

// TestAnOutageUsesUpNoAttempt: attempts that meet a database outage are
// snoozed, not failed: after more of them than the review has attempts,
// the review still runs and completes, and is never marked failed.
func TestAnOutageUsesUpNoAttempt(t *testing.T) {
	e := newEnv(t)
	var outages atomic.Int32
	h := newHandler(func(context.Context) error {
		if outages.Add(1) <= 4 {
			return fmt.Errorf("review: %w", ports.ErrUnavailable)
		}
		return nil
	})
	start(t, e, h, worker.Options{MaxAttempts: 2, RetryBackoff: 10 * time.Millisecond})

	id := e.enqueue(t)
	for i := range 5 {
		if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
			t.Fatalf("call %d = %+v, want %+v", i, got, want)
		}
	}
	if attempt := e.waitJob(t, id, "completed"); attempt != 1 {
		t.Errorf("completed at attempt %d, want 1: the outages used up attempts", attempt)
	}
	if got := h.all(); len(got) != 5 {
		t.Errorf("handler calls = %+v, want five runs and no fail", got)
	}
}

func TestDrainsInFlightReviewOnStop(t *testing.T) {
	e := newEnv(t)
	var ctxErr error
	finished := make(chan struct{})
	h := newHandler(func(ctx context.Context) error {
		time.Sleep(time.Second) // longer than the stop takes to begin
		ctxErr = ctx.Err()
		close(finished)
		return nil
	})
	stop := start(t, e, h, worker.Options{DrainTimeout: 20 * time.Second})

	id := e.enqueue(t)
	h.next(t)
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	select {
	case <-finished:
	default:
		t.Fatal("Run returned before the in-flight review finished")
	}
	if ctxErr != nil {
		t.Errorf("the review's context ended (%v) within the drain timeout", ctxErr)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("stop took %s, want about the review's remaining second", d)
	}
	if state, attempt := e.job(t, id); state != "completed" || attempt != 1 {
		t.Errorf("job %s after %d attempts, want completed after 1", state, attempt)
	}
}

func TestCancelsInFlightReviewAfterDrainTimeout(t *testing.T) {
	e := newEnv(t)
	h := newHandler(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	stop := start(t, e, h, worker.Options{DrainTimeout: 300 * time.Millisecond})

	id := e.enqueue(t)
	h.next(t)
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	// The job goes back to the queue, its attempt not counted, for another
	// replica to resume; the run is not failed.
	if state, attempt := e.job(t, id); state != "available" || attempt != 0 {
		t.Errorf("job %s at attempt %d, want available at 0", state, attempt)
	}
	for _, c := range h.all() {
		if c.method == "fail" {
			t.Errorf("FailReview called on shutdown")
		}
	}

	// The next worker resumes it.
	h2 := newHandler(nil)
	start(t, e, h2, worker.Options{})
	if got, want := h2.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("resumed call = %+v, want %+v", got, want)
	}
	e.waitJob(t, id, "completed")
}

// A job left running by an attempt that took no lease (its worker died
// before it could) is River's rescuer's: it retries it, and a job whose
// last review attempt was lost still ends with the run marked failed.
func TestRescuesJobsOfKilledWorkers(t *testing.T) {
	e := newEnv(t)
	resumed, lastLost := e.enqueue(t), e.enqueue(t)
	for id, attempt := range map[string]int{resumed: 1, lastLost: worker.DefaultMaxAttempts} {
		_, err := e.db.Bun().ExecContext(t.Context(), `
			UPDATE river_job SET state = 'running', attempt = ?, attempted_at = now() - interval '1 hour',
			       attempted_by = ARRAY['killed-worker']
			WHERE args ->> 'reviewId' = ?`, attempt, id)
		if err != nil {
			t.Fatal(err)
		}
	}

	h := newHandler(nil)
	start(t, e, h, worker.Options{RetryBackoff: 10 * time.Millisecond, JobTimeout: time.Second, RescueStuckJobsAfter: 2 * time.Second})
	got := map[call]bool{h.next(t): true, h.next(t): true}
	want := map[call]bool{{"run", e.tenant, resumed}: true, {"fail", e.tenant, lastLost}: true}
	if len(got) != 2 || !got[call{"run", e.tenant, resumed}] || !got[call{"fail", e.tenant, lastLost}] {
		t.Errorf("calls after rescue = %v, want %v", got, want)
	}
	if attempt := e.waitJob(t, resumed, "completed"); attempt != 2 {
		t.Errorf("resumed job completed at attempt %d, want 2", attempt)
	}
	if attempt := e.waitJob(t, lastLost, "cancelled"); attempt != worker.DefaultMaxAttempts+1 {
		t.Errorf("lost job finalised at attempt %d, want %d", attempt, worker.DefaultMaxAttempts+1)
	}
}

func TestRetentionJob(t *testing.T) {
	e := newEnv(t)
	var server string
	err := e.db.WithSystem(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw("INSERT INTO mcp_servers (tenant_id, name, url) VALUES (?, 'wiki', 'https://wiki.example.com/mcp') RETURNING id", e.tenant).
			Scan(ctx, &server); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status, created_at)
			VALUES (?0, ?1, 'old', 'ok', now() - interval '91 days'), (?0, ?1, 'new', 'ok', now() - interval '89 days')`, e.tenant, server)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	job := operations.NewRetentionJob(postgres.NewRetention(e.db), nopRetentionMetrics{}, wallClock{})
	start(t, e, newHandler(nil), worker.Options{Retention: job})
	deadline := time.Now().Add(wait)
	for {
		var tools []string
		err := e.db.WithSystem(t.Context(), func(ctx context.Context, tx bun.Tx) error {
			return tx.NewRaw("SELECT tool FROM mcp_tool_calls ORDER BY tool").Scan(ctx, &tools)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) == 1 && tools[0] == "new" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool calls left: %v, want [new]", tools)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		opts worker.Options
	}{
		{"rescue before timeout", worker.Options{JobTimeout: time.Minute, RescueStuckJobsAfter: 30 * time.Second}},
		{"rescue equals timeout", worker.Options{JobTimeout: time.Minute, RescueStuckJobsAfter: time.Minute}},
		{"negative workers", worker.Options{Workers: -1}},
	}
	for _, tt := range tests {
		if _, err := worker.New(e.db.Pool(), newHandler(nil), zerolog.Nop(), tt.opts); err == nil {
			t.Errorf("%s: New = nil error, want an error", tt.name)
		}
	}
	if _, err := worker.New(nil, newHandler(nil), zerolog.Nop(), worker.Options{}); err == nil {
		t.Error("New without a pool = nil error")
	}
	if _, err := worker.New(e.db.Pool(), nil, zerolog.Nop(), worker.Options{}); err == nil {
		t.Error("New without a handler = nil error")
	}
}

// The kind the worker runs is the one the postgres adapter enqueues.
func TestJobKindMatchesTheQueue(t *testing.T) {
	if worker.ReviewJobKind != postgres.ReviewJobKind {
		t.Errorf("worker.ReviewJobKind = %q, postgres.ReviewJobKind = %q", worker.ReviewJobKind, postgres.ReviewJobKind)
	}
	if postgres.ReviewJobMaxAttempts <= worker.DefaultMaxAttempts {
		t.Errorf("postgres.ReviewJobMaxAttempts = %d leaves no spare attempt beyond %d", postgres.ReviewJobMaxAttempts, worker.DefaultMaxAttempts)
	}
}

type nopRetentionMetrics struct{}

func (nopRetentionMetrics) RetentionDeleted(string, int64) {}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// countingRetention counts the runs of the retention job.
type countingRetention struct{ runs atomic.Int32 }

func (c *countingRetention) Run(context.Context) (map[string]int64, error) {
	c.runs.Add(1)
	return map[string]int64{}, nil
}

// Two replicas: only River's elected leader schedules the periodic job,
// so the retention runs once (at the leader's start), not once per
// replica.
func TestRetentionRunsOnOneReplica(t *testing.T) {
	e := newEnv(t)
	a, b := &countingRetention{}, &countingRetention{}
	start(t, e, newHandler(nil), worker.Options{Retention: a})
	// The second replica is stopped (a later cleanup runs first) before
	// the first one checks for leaked goroutines.
	wb, err := worker.New(e.db.Pool(), newHandler(nil), zerolog.Nop(), worker.Options{Retention: b})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- wb.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("second replica: Run = %v", err)
		}
	})
	deadline := time.Now().Add(wait)
	for a.runs.Load()+b.runs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the retention job did not run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // time for a second replica's run, were there one
	if n := a.runs.Load() + b.runs.Load(); n != 1 {
		t.Errorf("the retention job ran %d times across two replicas, want 1", n)
	}
}
