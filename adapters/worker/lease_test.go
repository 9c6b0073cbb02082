package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/adapters/worker"
)

// Tests of the review leases (lease.go): an attempt runs only under its
// lease, a job whose lease ended is running again within the bound, one
// whose lease is held never is, and an attempt that loses its lease stops.

// childDSNEnv, when set, makes the test binary a worker process whose
// reviews never end, for TestResumesTheReviewOfAKilledWorkerProcess to
// kill.
const childDSNEnv = "WORKER_TEST_CHILD_DSN"

func TestMain(m *testing.M) {
	if dsn := os.Getenv(childDSNEnv); dsn != "" {
		os.Exit(runChildWorker(dsn))
	}
	os.Exit(m.Run())
}

// runChildWorker runs a worker until it is killed; its handler prints
// "running <review id>" and blocks.
func runChildWorker(dsn string) int {
	db, closeFn, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeFn()
	h := &printingHandler{}
	w, err := worker.New(db.Pool(), h, zerolog.New(os.Stderr), worker.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := w.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type printingHandler struct{ mu sync.Mutex }

func (h *printingHandler) RunReview(ctx context.Context, _, reviewID string) error {
	h.mu.Lock()
	fmt.Println("running", reviewID)
	h.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (h *printingHandler) FailReview(context.Context, string, string) error { return nil }

// leaseOpts are options whose lease check runs every 100 ms with a 100 ms
// grace.
func leaseOpts(o worker.Options) worker.Options {
	return o.WithLeaseTimings(100*time.Millisecond, 100*time.Millisecond)
}

// attemptOf sets the review's job running at attempt, started a minute
// ago by a worker that is gone; leased records that the attempt took its
// lease (its marker), as a live attempt does.
func (e env) attemptOf(t *testing.T, reviewID string, attempt int, leased bool) {
	t.Helper()
	marker := "'{}'::jsonb"
	if leased {
		marker = "jsonb_build_object('" + worker.LeaseMarker + "', now() - interval '1 minute')"
	}
	_, err := e.db.Bun().ExecContext(t.Context(), `
		UPDATE river_job SET state = 'running', attempt = ?, attempted_at = now() - interval '1 minute',
		       attempted_by = ARRAY['killed-worker'], metadata = metadata || `+marker+`
		WHERE args ->> 'reviewId' = ?`, attempt, reviewID)
	if err != nil {
		t.Fatal(err)
	}
}

// holdLease takes the review's lease on a connection of the test's own,
// as a live attempt on another replica would; release closes it.
func (e env) holdLease(t *testing.T, reviewID string) (release func()) {
	t.Helper()
	conn, err := pgx.ConnectConfig(t.Context(), e.db.Pool().Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := worker.TakeLease(t.Context(), conn, reviewID); err != nil || !got {
		t.Fatalf("TakeLease = %t, %v", got, err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = conn.Close(context.Background()) }) }
	t.Cleanup(release)
	return release
}

// leaseHolder is the backend pid holding the review's lease, 0 for none.
func (e env) leaseHolder(t *testing.T, reviewID string) int {
	t.Helper()
	var pids []int
	if err := e.db.Bun().NewRaw(strings.ReplaceAll(worker.LeaseHolderSQL, "$1", "?"), reviewID).Scan(t.Context(), &pids); err != nil {
		t.Fatal(err)
	}
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}

// jobMeta is the SQL expression expr of the review's job row, as text
// ("" for NULL).
func (e env) jobMeta(t *testing.T, reviewID, expr string) string {
	t.Helper()
	var v string
	err := e.db.Bun().NewRaw("SELECT coalesce(("+expr+")::text, '') FROM river_job WHERE kind = ? AND args ->> 'reviewId' = ?",
		worker.ReviewJobKind, reviewID).Scan(context.Background(), &v)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestResumesJobsWhoseLeaseEnded: jobs left running by leased attempts
// whose lease is gone are running again at once, not after River's
// rescue delay (six minutes here): the lost attempt counts (a job whose
// last review attempt was lost gets its run marked failed). A job whose
// attempt took no lease is left to River's rescuer.
func TestResumesJobsWhoseLeaseEnded(t *testing.T) {
	e := newEnv(t)
	resumed, lastLost, unleased := e.enqueue(t), e.enqueue(t), e.enqueue(t)
	e.attemptOf(t, resumed, 1, true)
	e.attemptOf(t, lastLost, worker.DefaultMaxAttempts, true)
	e.attemptOf(t, unleased, 1, false)

	h := newHandler(nil)
	began := time.Now()
	start(t, e, h, leaseOpts(worker.Options{RetryBackoff: 10 * time.Millisecond}))
	got := map[call]bool{h.next(t): true, h.next(t): true}
	if !got[call{"run", e.tenant, resumed}] || !got[call{"fail", e.tenant, lastLost}] {
		t.Fatalf("calls after the leases ended = %v, want run %s and fail %s", got, resumed, lastLost)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("resumed after %v, want well within 5 s", d)
	}
	if attempt := e.waitJob(t, resumed, "completed"); attempt != 2 {
		t.Errorf("resumed job completed at attempt %d, want 2 (the lost one counts)", attempt)
	}
	if attempt := e.waitJob(t, lastLost, "cancelled"); attempt != worker.DefaultMaxAttempts+1 {
		t.Errorf("lost job finalised at attempt %d, want %d", attempt, worker.DefaultMaxAttempts+1)
	}
	if n := e.jobMeta(t, resumed, "metadata ->> 'river:rescue_count'"); n != "1" {
		t.Errorf("river:rescue_count = %q, want 1", n)
	}
	if msg := e.jobMeta(t, resumed, "errors[1] ->> 'error'"); !strings.Contains(msg, "lease ended") {
		t.Errorf("the resumed job's first error = %q, want the lease's", msg)
	}
	time.Sleep(500 * time.Millisecond) // five more checks
	if state, attempt := e.job(t, unleased); state != "running" || attempt != 1 {
		t.Errorf("the job without a lease is %s at attempt %d, want running at 1 (River's rescuer's)", state, attempt)
	}
	for _, c := range h.all() {
		if c.review == unleased {
			t.Errorf("the job without a lease was run: %+v", c)
		}
	}
}

// TestNeverResumesAJobWhoseLeaseIsHeld: while another session holds a
// running job's lease (its attempt lives, on another replica), no check
// resumes it; once the session ends, it runs again.
func TestNeverResumesAJobWhoseLeaseIsHeld(t *testing.T) {
	e := newEnv(t)
	id := e.enqueue(t)
	e.attemptOf(t, id, 1, true)
	release := e.holdLease(t, id)

	h := newHandler(nil)
	start(t, e, h, leaseOpts(worker.Options{}))
	time.Sleep(1500 * time.Millisecond) // fifteen checks
	if state, attempt := e.job(t, id); state != "running" || attempt != 1 {
		t.Errorf("job with a held lease is %s at attempt %d, want running at 1", state, attempt)
	}
	if got := h.all(); len(got) != 0 {
		t.Errorf("handler calls while the lease is held = %+v, want none", got)
	}

	release()
	ended := time.Now()
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
	t.Logf("running again %v after the lease ended", time.Since(ended).Round(time.Millisecond))
	if attempt := e.waitJob(t, id, "completed"); attempt != 2 {
		t.Errorf("completed at attempt %d, want 2; errors %s", attempt, e.jobMeta(t, id, "errors"))
	}
}

// TestAnAttemptWithoutItsLeaseDoesNotRun: an attempt that cannot take
// its lease does not run; it is snoozed without using up an attempt, and
// runs once the lease is free.
func TestAnAttemptWithoutItsLeaseDoesNotRun(t *testing.T) {
	e := newEnv(t)
	id := newID(t)
	release := e.holdLease(t, id)
	e.enqueueID(t, id)

	h := newHandler(nil)
	start(t, e, h, leaseOpts(worker.Options{RetryBackoff: 100 * time.Millisecond}))
	deadline := time.Now().Add(wait)
	for n, _ := strconv.Atoi(e.jobMeta(t, id, "metadata ->> 'snoozes'")); n < 3; n, _ = strconv.Atoi(e.jobMeta(t, id, "metadata ->> 'snoozes'")) {
		if got := h.all(); len(got) != 0 {
			t.Fatalf("handler calls without the lease = %+v, want none", got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attempts were not refused: snoozes = %q", e.jobMeta(t, id, "metadata ->> 'snoozes'"))
		}
		time.Sleep(50 * time.Millisecond)
	}

	release()
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
	if attempt := e.waitJob(t, id, "completed"); attempt != 1 {
		t.Errorf("completed at attempt %d, want 1: the refused attempts used up attempts", attempt)
	}
	// The attempt took its marker away before its lock: River records its
	// outcome after the lock is gone, and the check must not take the
	// job, still running meanwhile, for lost.
	if marked := e.jobMeta(t, id, "metadata -> '"+worker.LeaseMarker+"' IS NOT NULL"); marked != "false" {
		t.Errorf("the finished attempt's marker is still there (%s)", marked)
	}
}

// TestALostLeaseStopsTheAttempt: a running attempt holds its lease (the
// lock and the marker of its attempt); when its lease connection breaks
// (its session ended as in a database restart), its context is cancelled
// within the ping bound, the job goes back without using up an attempt
// and runs again, never beside the stopped attempt.
func TestALostLeaseStopsTheAttempt(t *testing.T) {
	e := newEnv(t)
	var calls, inFlight, peak atomic.Int32
	stopped := make(chan time.Time, 1)
	var cause atomic.Value
	h := newHandler(func(ctx context.Context) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if calls.Add(1) > 1 {
			return nil
		}
		<-ctx.Done()
		cause.Store(context.Cause(ctx))
		stopped <- time.Now()
		time.Sleep(200 * time.Millisecond) // winding down
		return ctx.Err()
	})
	start(t, e, h, worker.Options{DrainTimeout: 500 * time.Millisecond})
	id := e.enqueue(t)
	h.next(t)

	pid := e.leaseHolder(t, id)
	if pid == 0 {
		t.Fatal("the running attempt holds no lease")
	}
	if marked := e.jobMeta(t, id, "(metadata ->> '"+worker.LeaseMarker+"')::timestamptz = attempted_at"); marked != "true" {
		t.Errorf("the job's lease marker names its attempt: %q, want true", marked)
	}
	if _, err := e.db.Bun().ExecContext(t.Context(), "SELECT pg_terminate_backend(?)", pid); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	select {
	case at := <-stopped:
		if d := at.Sub(cut); d > 4*time.Second {
			t.Errorf("the attempt stopped %v after its lease was lost, want within 3 s", d)
		}
		t.Logf("the attempt stopped %v after its lease connection was cut", at.Sub(cut).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt ran on without its lease")
	}
	if err, _ := cause.Load().(error); err == nil || !strings.Contains(err.Error(), "lease was lost") {
		t.Errorf("the attempt's context ended with %v, want the lost lease", err)
	}
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
	if attempt := e.waitJob(t, id, "completed"); attempt != 1 {
		t.Errorf("completed at attempt %d, want 1: the stopped attempt used up an attempt", attempt)
	}
	if p := peak.Load(); p != 1 {
		t.Errorf("%d attempts ran at once, want 1", p)
	}
}

// TestADatabaseRestartStopsTheAttempt: when every session ends at once
// (the database restarts: here, a proxy before it cuts every connection)
// while the worker lives, the running attempt has lost its lease and
// stops before the database is back; the review then runs again, never
// beside the stopped attempt.
func TestADatabaseRestartStopsTheAttempt(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	db, closeFn, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	e := newEnvOn(t, db)
	var calls, inFlight, peak atomic.Int32
	stopped := make(chan time.Time, 1)
	h := newHandler(func(ctx context.Context) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if calls.Add(1) > 1 {
			return nil
		}
		<-ctx.Done()
		stopped <- time.Now()
		return ctx.Err()
	})
	// The proxy's goroutines of the connections made after the cut.
	mend := "github.com/codelotse/codelotse/adapters/postgres/pgtest.(*Proxy).Mend.func1"
	start(t, e, h, leaseOpts(worker.Options{RetryBackoff: 100 * time.Millisecond, DrainTimeout: 500 * time.Millisecond}),
		goleak.IgnoreAnyFunction(mend), goleak.IgnoreAnyFunction(mend+".1"), goleak.IgnoreAnyFunction(mend+".2"))
	id := e.enqueue(t)
	h.next(t)

	proxy.Cut()
	cut := time.Now()
	select {
	case at := <-stopped:
		t.Logf("the attempt stopped %v after the database went away", at.Sub(cut).Round(time.Millisecond))
	case <-time.After(4 * time.Second):
		t.Fatal("the attempt runs on with its lease gone")
	}
	time.Sleep(time.Second)
	proxy.Mend(t)
	back := time.Now()
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
	t.Logf("running again %v after the database was back", time.Since(back).Round(time.Millisecond))
	e.waitJob(t, id, "completed")
	if p := peak.Load(); p != 1 {
		t.Errorf("%d attempts ran at once, want 1", p)
	}
}

// TestLeaseConnectionBoundsALostNode: the lease connection asks the
// server to end its session (and lock) when its node goes silent, within
// about 12 s, not the kernel's two hours.
func TestLeaseConnectionBoundsALostNode(t *testing.T) {
	e := newEnv(t)
	conn, err := worker.OpenLease(t.Context(), e.db.Pool())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for name, want := range map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
		"tcp_keepalives_count": "3", "tcp_user_timeout": "10000"} {
		var got string
		if err := conn.QueryRow(t.Context(), "SHOW "+name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if len(worker.LeaseParams) != 5 {
		t.Errorf("lease settings %v: a setting is not checked here", worker.LeaseParams)
	}
}

// TestResumesTheReviewOfAKilledWorkerProcess: a worker process is killed
// (SIGKILL) in the middle of a review; with the default settings, the
// review is running again on the other worker, and done, within 60 s of
// the kill (at most the check interval, 10 s, plus the grace, 5 s, plus a
// fetch).
func TestResumesTheReviewOfAKilledWorkerProcess(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, closeFn, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	e := newEnvOn(t, db)
	id := e.enqueue(t)

	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), childDSNEnv+"="+dsn)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuf
	child.Stderr = &logs
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	running := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if r, ok := strings.CutPrefix(sc.Text(), "running "); ok {
				running <- r
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case r := <-running:
		if r != id {
			t.Fatalf("the child runs %s, want %s", r, id)
		}
	case <-time.After(wait):
		t.Fatalf("the child worker did not start the review:\n%s", logs.String())
	}
	if e.leaseHolder(t, id) == 0 {
		t.Fatal("the child's attempt holds no lease")
	}

	h := newHandler(nil)
	start(t, e, h, worker.Options{}) // the defaults: a check every 10 s, a 5 s grace
	time.Sleep(200 * time.Millisecond)
	if got := h.all(); len(got) != 0 {
		t.Fatalf("the second worker ran the review while the first runs it: %+v", got)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-exited
	if got, want := h.next(t), (call{"run", e.tenant, id}); got != want {
		t.Fatalf("call = %+v, want %+v", got, want)
	}
	runningAgain := time.Since(killed)
	if attempt := e.waitJob(t, id, "completed"); attempt != 2 {
		t.Errorf("completed at attempt %d, want 2", attempt)
	}
	done := time.Since(killed)
	t.Logf("SIGKILL to running again on the second worker: %v; to done: %v",
		runningAgain.Round(time.Millisecond), done.Round(time.Millisecond))
	if done > 60*time.Second {
		t.Errorf("done %v after the kill, want under 60 s", done)
	}
	if bound := worker.DefaultLeaseCheckInterval + worker.DefaultLeaseGrace + 5*time.Second; runningAgain > bound {
		t.Errorf("running again %v after the kill, want within %v", runningAgain, bound)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
