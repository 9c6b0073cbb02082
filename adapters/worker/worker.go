// Package worker is the driving adapter that runs review jobs: a River
// client on the shared pgx pool that takes the jobs the review request
// enqueued (see the postgres adapter's ReviewRepo.Insert) and hands them
// to the application, and that schedules the retention job and the
// recheck between reviews.
//
// Any number of replicas may run; River hands each job to one of them.
// A review is never left running forever:
//
//   - a failed attempt is retried, up to [Options.MaxAttempts] attempts;
//     when the last one fails, [ReviewHandler.FailReview] marks the run
//     failed;
//   - the job has more River attempts than review attempts; the spare ones
//     only mark the run failed, so a run whose last review attempt was lost
//     (a killed worker, a failed FailReview) still ends as failed;
//   - every attempt holds a lease that PostgreSQL ends with the attempt's
//     process (lease.go): when a worker is killed, or its node is lost,
//     any replica's lease check makes the job available again within
//     about 16 s (28 s for a lost node), and the next attempt resumes the
//     run (ReviewRepo.Start accepts a running run); an attempt never runs
//     without the lease, so never beside another;
//   - an attempt whose lease connection breaks (a database restart) is
//     cancelled and put back in the queue without using up an attempt;
//   - a job whose attempt took no lease is made retryable by the leader's
//     rescuer after [Options.RescueStuckJobsAfter];
//   - an attempt that met a database outage (ports.ErrUnavailable) is
//     snoozed for [Options.RetryBackoff] and uses up no attempt;
//   - a job cancelled through River marks its run failed;
//   - on shutdown, in-flight runs get [Options.DrainTimeout] to finish;
//     runs still going are then cancelled and put back in the queue
//     without using up an attempt, for another replica to resume.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/ports"
)

// The jobs this adapter runs. The review job is [ports.ReviewJob], the
// type the postgres adapter enqueues.
const (
	// ReviewJobKind is the River job kind of a review run.
	ReviewJobKind = ports.ReviewJobKind
	// RetentionJobKind is the River job kind of the retention job.
	RetentionJobKind = "retention"
	// RecheckJobKind is the River job kind of the recheck between reviews.
	RecheckJobKind = "mcp_recheck"
	// MaintenanceQueue is the River queue of the retention job and the
	// recheck, apart from the review queue (River's default queue) so that
	// neither waits for the other.
	MaintenanceQueue = "maintenance"
	// AuditStreamJobKind is the River job kind of the audit stream.
	AuditStreamJobKind = "audit_stream"
	// AuditQueue is the River queue of the audit stream, apart from the
	// others, so that a slow or absent sink delays neither reviews nor
	// maintenance.
	AuditQueue = "audit"
)

// Defaults of [Options].
const (
	DefaultWorkers     = 4
	DefaultMaxAttempts = 3
	// DefaultJobTimeout bounds one attempt: the finder's 240 s wall clock,
	// then the verifier and the summary.
	DefaultJobTimeout = 5 * time.Minute
	// DefaultRescueStuckJobsAfter must exceed the job timeout, or a job
	// still running on a live worker would be rescued and run twice.
	DefaultRescueStuckJobsAfter = DefaultJobTimeout + time.Minute
	DefaultDrainTimeout         = 30 * time.Second
	DefaultRetryBackoff         = 10 * time.Second
	DefaultRetentionInterval    = time.Hour
)

const (
	// maxRetryBackoff caps the exponential retry delay.
	maxRetryBackoff = 10 * time.Minute
	// failTimeout bounds a FailReview that runs after the attempt's own
	// context ended (a timeout, a remote cancel).
	failTimeout = 30 * time.Second
	// hardStopTimeout is how long Run waits, after cancelling the jobs that
	// outlived the drain timeout, for them to return.
	hardStopTimeout = 10 * time.Second
)

// ReviewHandler is the subset of the application the worker needs. Both
// methods are called concurrently, for different runs and, after a rescue,
// possibly for the same run; both must be idempotent.
type ReviewHandler interface {
	// RunReview runs the review (Start, the pipeline, Finish). It returns
	// nil when the run is already finished, and an error to have the
	// attempt retried. It must return when ctx is done.
	RunReview(ctx context.Context, tenantID, reviewID string) error
	// FailReview marks the run failed; nil when it is already finished.
	FailReview(ctx context.Context, tenantID, reviewID string) error
}

// Retention is the retention job of the application (operations.RetentionJob).
type Retention interface {
	// Run deletes the expired rows of every tenant and returns how many
	// it deleted per table, also with an error (the counts so far).
	Run(ctx context.Context) (map[string]int64, error)
}

// Recheck is the recheck between reviews of the application
// (registry.RecheckJob).
type Recheck interface {
	// RecheckServers lists again the tools of every server with pinned
	// tools whose last listing is older than interval (and its jitter)
	// and returns how many it rechecked by outcome.
	RecheckServers(ctx context.Context, interval time.Duration) (map[string]int, error)
}

// AuditStream is the audit stream of the application
// (operations.AuditStreamJob).
type AuditStream interface {
	// Deliver sends the due entries of the outbox and returns how many it
	// delivered and how many tenants failed.
	Deliver(ctx context.Context) (map[string]int, error)
}

// DefaultAuditStreamPeriod is how often the audit stream runs: an event
// reaches a sink that is up within about this long.
const DefaultAuditStreamPeriod = 5 * time.Second

// MinRecheckPeriod is the shortest period of the recheck job: it runs
// every tenth of RecheckInterval, not more often than this.
const MinRecheckPeriod = 10 * time.Second

// Options configure a [Worker]. Zero values take the defaults above.
type Options struct {
	// Workers is how many reviews run at once in this replica. Each holds
	// a pool connection while it queries, and River keeps about three more
	// (LISTEN, fetches, completions): size the pool above Workers. Each
	// also holds a connection of its own, its lease, outside the pool.
	Workers int
	// MaxAttempts is how many attempts run the review; it is capped at
	// one less than the job's River max_attempts.
	MaxAttempts int
	// JobTimeout cancels an attempt's context after this long.
	JobTimeout time.Duration
	// RescueStuckJobsAfter is how long a job may stay running before the
	// rescuer takes it for lost (its worker died) and retries it. It must
	// be greater than JobTimeout.
	RescueStuckJobsAfter time.Duration
	// DrainTimeout is how long Run waits for in-flight runs after its
	// context is cancelled before it cancels them.
	DrainTimeout time.Duration
	// RetryBackoff is the delay before the second attempt; it doubles with
	// every attempt, up to 10 minutes.
	RetryBackoff time.Duration
	// Retention, when set, is run every RetentionInterval (and once when a
	// replica becomes the leader) by one replica of the cluster.
	Retention         Retention
	RetentionInterval time.Duration
	// Recheck, when set and RecheckInterval is positive, is run every
	// tenth of RecheckInterval (at least MinRecheckPeriod, and once when a
	// replica becomes the leader) by one replica of the cluster; it
	// rechecks each server about every RecheckInterval. A RecheckInterval
	// of 0 schedules no recheck (QUAVON_MCP_RECHECK_INTERVAL=0).
	Recheck         Recheck
	RecheckInterval time.Duration
	// AuditStream, when set, is run every AuditStreamPeriod (default
	// DefaultAuditStreamPeriod) by one replica of the cluster, on
	// AuditQueue.
	AuditStream       AuditStream
	AuditStreamPeriod time.Duration
	// Metrics, when set, receives review durations and outcomes, job
	// latency and the queue's depth (observe.go).
	Metrics Metrics

	// leaseCheckInterval and leaseGrace are DefaultLeaseCheckInterval and
	// DefaultLeaseGrace; tests shorten them (export_test.go).
	leaseCheckInterval, leaseGrace time.Duration
}

func (o Options) withDefaults() (Options, error) {
	o.Workers = cmpOr(o.Workers, DefaultWorkers)
	o.MaxAttempts = cmpOr(o.MaxAttempts, DefaultMaxAttempts)
	o.JobTimeout = cmpOr(o.JobTimeout, DefaultJobTimeout)
	if o.RescueStuckJobsAfter == 0 {
		o.RescueStuckJobsAfter = max(DefaultRescueStuckJobsAfter, o.JobTimeout+time.Minute)
	}
	o.DrainTimeout = cmpOr(o.DrainTimeout, DefaultDrainTimeout)
	o.RetryBackoff = cmpOr(o.RetryBackoff, DefaultRetryBackoff)
	o.RetentionInterval = cmpOr(o.RetentionInterval, DefaultRetentionInterval)
	o.AuditStreamPeriod = cmpOr(o.AuditStreamPeriod, DefaultAuditStreamPeriod)
	o.leaseCheckInterval = cmpOr(o.leaseCheckInterval, DefaultLeaseCheckInterval)
	o.leaseGrace = cmpOr(o.leaseGrace, DefaultLeaseGrace)
	switch {
	case o.Workers < 0, o.MaxAttempts < 0, o.JobTimeout < 0, o.RescueStuckJobsAfter < 0,
		o.DrainTimeout < 0, o.RetryBackoff < 0, o.RetentionInterval < 0, o.RecheckInterval < 0, o.AuditStreamPeriod < 0, o.leaseCheckInterval < 0, o.leaseGrace < 0:
		return o, errors.New("worker: options must not be negative")
	case o.RescueStuckJobsAfter <= o.JobTimeout:
		return o, fmt.Errorf("worker: RescueStuckJobsAfter (%s) must be greater than JobTimeout (%s)", o.RescueStuckJobsAfter, o.JobTimeout)
	}
	return o, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Worker runs review jobs and the retention job. Run it once.
type Worker struct {
	client  *river.Client[pgx.Tx]
	resumer *resumer
	log     zerolog.Logger
	opts    Options
}

// New returns a Worker that takes jobs from the database of pool. It
// starts nothing: see [Worker.Run].
func New(pool *pgxpool.Pool, handler ReviewHandler, log zerolog.Logger, opts Options) (*Worker, error) {
	if pool == nil || handler == nil {
		return nil, errors.New("worker: a pool and a handler are required")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	riverLog := log.With().Str("component", "river").Logger()
	log = log.With().Str("component", "worker").Logger()

	workers := river.NewWorkers()
	review := &reviewWorker{handler: handler, log: log, maxAttempts: opts.MaxAttempts, metrics: opts.Metrics,
		outageSnooze: opts.RetryBackoff, leases: newLeases(pool)}
	if err := river.AddWorkerSafely(workers, review); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	cfg := &river.Config{
		Logger: slog.New(zerolog.NewSlogHandler(riverLog)),
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: opts.Workers},
			MaintenanceQueue:   {MaxWorkers: 1},
			AuditQueue:         {MaxWorkers: 1},
		},
		Workers:              workers,
		JobTimeout:           opts.JobTimeout,
		RescueStuckJobsAfter: opts.RescueStuckJobsAfter,
		RetryPolicy:          backoff{base: opts.RetryBackoff},
	}
	for _, p := range opts.periodics() {
		if err := p.add(workers, log); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(
			river.PeriodicInterval(p.every),
			func() (river.JobArgs, *river.InsertOpts) {
				// A run that outlasts its period is not joined by the next:
				// no job of the kind is inserted while one waits or runs.
				return p.args, &river.InsertOpts{Queue: p.queue, MaxAttempts: p.attempts, UniqueOpts: river.UniqueOpts{
					ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
						rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable},
				}}
			},
			&river.PeriodicJobOpts{ID: p.args.Kind(), RunOnStart: true},
		))
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	if opts.Metrics != nil {
		opts.Metrics.ObserveQueue(queueDepth(pool))
	}
	res := &resumer{pool: pool, log: log, interval: opts.leaseCheckInterval, grace: opts.leaseGrace}
	return &Worker{client: client, resumer: res, log: log, opts: opts}, nil
}

// Run works jobs until ctx is cancelled (SIGTERM), then stops gracefully:
// it stops taking jobs, waits up to DrainTimeout for in-flight runs, then
// cancels those still going (River puts them back in the queue) and waits
// for them to return. It returns nil after a graceful stop, or the error
// that kept the worker from starting or stopped it.
func (w *Worker) Run(ctx context.Context) error {
	// River must not see ctx: cancelling its start context would cancel
	// the jobs at once.
	runCtx := context.WithoutCancel(ctx)
	if err := w.client.Start(runCtx); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	w.log.Info().Int("workers", w.opts.Workers).Msg("worker started")
	// Every replica checks the leases, so a lost leader delays nothing.
	checkCtx, stopCheck := context.WithCancel(runCtx)
	checked := make(chan struct{})
	go func() { defer close(checked); w.resumer.run(checkCtx) }()
	defer func() { stopCheck(); <-checked }()

	select {
	case <-ctx.Done():
	case <-w.client.Stopped():
		return errors.New("worker: job queue client stopped unexpectedly")
	}

	w.log.Info().Dur("drainTimeout", w.opts.DrainTimeout).Msg("worker stopping; draining in-flight reviews")
	drainCtx, cancel := context.WithTimeout(runCtx, w.opts.DrainTimeout)
	err := w.client.Stop(drainCtx)
	cancel()
	if err == nil {
		w.log.Info().Msg("worker stopped")
		return nil
	}
	w.log.Warn().Msg("drain timeout elapsed; cancelling in-flight reviews")
	hardCtx, cancel := context.WithTimeout(runCtx, hardStopTimeout)
	defer cancel()
	if err := w.client.StopAndCancel(hardCtx); err != nil {
		return fmt.Errorf("worker: stop: in-flight jobs did not return after cancellation: %w", err)
	}
	w.log.Info().Msg("worker stopped")
	return nil
}

// reviewWorker runs one attempt of a review job.
type reviewWorker struct {
	river.WorkerDefaults[ports.ReviewJob]
	handler     ReviewHandler
	log         zerolog.Logger
	maxAttempts int
	metrics     Metrics
	// outageSnooze is how long an attempt that met a database outage, or
	// could not take its lease, waits, without using up an attempt.
	outageSnooze time.Duration
	leases       *leases
}

// Work runs the attempt under its lease, or not at all.
func (w *reviewWorker) Work(ctx context.Context, job *river.Job[ports.ReviewJob]) error {
	lease, err := w.leases.take(ctx, job.JobRow, job.Args.ReviewID)
	if err != nil {
		return w.refuse(ctx, job, err)
	}
	defer lease.release()
	return w.observed(lease.ctx, job, func(ctx context.Context) error { return w.work(ctx, job) })
}

// refuse answers an attempt that could not take its lease: it does not
// run, and is snoozed without using up an attempt.
func (w *reviewWorker) refuse(ctx context.Context, job *river.Job[ports.ReviewJob], err error) error {
	log := w.log.With().Str("reviewId", job.Args.ReviewID).Int("attempt", job.Attempt).Logger()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", context.Canceled, err) // the client is stopping
	case errors.Is(err, errLeaseHeld), errors.Is(err, errNotCurrent):
		log.Warn().Err(err).Msg("review attempt not run: it has no lease")
	default:
		log.Warn().Err(err).Msg("review attempt not run: its lease could not be opened; snoozed")
	}
	return river.JobSnooze(w.outageSnooze)
}

func (w *reviewWorker) work(ctx context.Context, job *river.Job[ports.ReviewJob]) error {
	tenant, review := job.Args.TenantID, job.Args.ReviewID
	log := w.log.With().Str("reviewId", review).Int("attempt", job.Attempt).Logger()
	reviewAttempts := min(w.maxAttempts, job.MaxAttempts-1)

	if job.Attempt > reviewAttempts {
		// A spare attempt: the review's attempts are used up (the last
		// one was lost, or marking the run failed failed).
		if err := w.handler.FailReview(ctx, tenant, review); err != nil {
			return fmt.Errorf("mark review failed: %w", err)
		}
		log.Warn().Msg("review marked failed: its attempts are used up")
		return river.JobCancel(errors.New("review attempts used up; run marked failed"))
	}

	err := w.handler.RunReview(ctx, tenant, review)
	switch {
	case err == nil:
		return nil
	case errors.Is(context.Cause(ctx), errLeaseLost):
		// Back in the queue at once, the attempt not counted; the next
		// attempt runs once this one's lock is gone.
		log.Warn().Err(context.Cause(ctx)).Msg("review attempt stopped: its lease was lost")
		return fmt.Errorf("%w: %w", context.Canceled, river.JobSnooze(0))
	case errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely):
		// River finalises the job as cancelled and will not retry it.
		log.Warn().Err(err).Msg("review job cancelled; marking the run failed")
		return errors.Join(err, w.fail(ctx, tenant, review))
	case errors.Is(ctx.Err(), context.Canceled):
		// The client is stopping: River puts the job back without counting
		// the attempt when the error says so.
		return fmt.Errorf("%w: %w", context.Canceled, err)
	case errors.Is(err, ports.ErrUnavailable):
		log.Warn().Err(err).Msg("review attempt met a database outage; snoozed")
		return river.JobSnooze(w.outageSnooze)
	case job.Attempt < reviewAttempts:
		log.Warn().Err(err).Msg("review attempt failed; retrying")
		return err
	}
	log.Error().Err(err).Msg("review failed after its last attempt")
	if ferr := w.fail(ctx, tenant, review); ferr != nil {
		return errors.Join(err, ferr) // a spare attempt marks it failed
	}
	return river.JobCancel(err)
}

// fail marks the run failed on a context of its own: the attempt's may
// have ended (timeout, cancellation).
func (w *reviewWorker) fail(ctx context.Context, tenant, review string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failTimeout)
	defer cancel()
	if err := w.handler.FailReview(ctx, tenant, review); err != nil {
		return fmt.Errorf("mark review failed: %w", err)
	}
	return nil
}

// periodic is a job one replica schedules: its (empty) arguments, its
// period and the registration of its worker.
type periodic struct {
	args     river.JobArgs
	every    time.Duration
	queue    string
	attempts int
	add      func(*river.Workers, zerolog.Logger) error
}

// periodics are the periodic jobs o schedules: the retention job when
// set, the recheck when set with a positive interval.
func (o Options) periodics() []periodic {
	var out []periodic
	if o.Retention != nil {
		out = append(out, periodic{args: retentionArgs{}, every: o.RetentionInterval, queue: MaintenanceQueue, attempts: 3,
			add: func(w *river.Workers, log zerolog.Logger) error {
				return river.AddWorkerSafely(w, &retentionWorker{retention: o.Retention, log: log})
			}})
	}
	if o.Recheck != nil && o.RecheckInterval > 0 {
		out = append(out, periodic{args: recheckArgs{}, every: min(o.RecheckInterval, max(o.RecheckInterval/10, MinRecheckPeriod)),
			queue: MaintenanceQueue, attempts: 3,
			add: func(w *river.Workers, log zerolog.Logger) error {
				return river.AddWorkerSafely(w, &recheckWorker{recheck: o.Recheck, interval: o.RecheckInterval, log: log})
			}})
	}
	if o.AuditStream != nil {
		// One attempt: the outbox keeps what a failed run did not send, and
		// the next run, a period later, sends it.
		out = append(out, periodic{args: auditStreamArgs{}, every: o.AuditStreamPeriod, queue: AuditQueue, attempts: 1,
			add: func(w *river.Workers, log zerolog.Logger) error {
				return river.AddWorkerSafely(w, &auditStreamWorker{stream: o.AuditStream, log: log})
			}})
	}
	return out
}

// auditStreamArgs are the (empty) arguments of the audit stream job.
type auditStreamArgs struct{}

func (auditStreamArgs) Kind() string { return AuditStreamJobKind }

type auditStreamWorker struct {
	river.WorkerDefaults[auditStreamArgs]
	stream AuditStream
	log    zerolog.Logger
}

func (w *auditStreamWorker) Work(ctx context.Context, _ *river.Job[auditStreamArgs]) error {
	counts, err := w.stream.Deliver(ctx)
	if err != nil {
		w.log.Warn().Err(err).Msg("audit stream run failed")
		return fmt.Errorf("audit stream: %w", err)
	}
	if counts[ports.AuditDelivered]+counts[ports.AuditFailed] > 0 {
		w.log.Debug().Int("delivered", counts[ports.AuditDelivered]).Int("failedTenants", counts[ports.AuditFailed]).Msg("audit stream run")
	}
	return nil
}

// recheckArgs are the (empty) arguments of the recheck job.
type recheckArgs struct{}

func (recheckArgs) Kind() string { return RecheckJobKind }

type recheckWorker struct {
	river.WorkerDefaults[recheckArgs]
	recheck  Recheck
	interval time.Duration
	log      zerolog.Logger
}

func (w *recheckWorker) Work(ctx context.Context, _ *river.Job[recheckArgs]) error {
	counts, err := w.recheck.RecheckServers(ctx, w.interval)
	ev := w.log.Info()
	if err != nil {
		ev = w.log.Warn().Err(err)
	}
	d := zerolog.Dict()
	for outcome, n := range counts {
		d = d.Int(outcome, n)
	}
	ev.Dict("rechecked", d).Msg("mcp recheck run")
	if err != nil {
		return fmt.Errorf("mcp recheck: %w", err)
	}
	return nil
}

// retentionArgs are the (empty) arguments of the retention job.
type retentionArgs struct{}

func (retentionArgs) Kind() string { return RetentionJobKind }

type retentionWorker struct {
	river.WorkerDefaults[retentionArgs]
	retention Retention
	log       zerolog.Logger
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[retentionArgs]) error {
	deleted, err := w.retention.Run(ctx)
	ev := w.log.Info()
	if err != nil {
		ev = w.log.Warn().Err(err)
	}
	d := zerolog.Dict()
	for table, n := range deleted {
		d = d.Int64(table, n)
	}
	ev.Dict("deleted", d).Msg("retention run")
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	return nil
}

// backoff is the retry policy: base, doubled with every attempt, capped.
type backoff struct{ base time.Duration }

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	d := b.base
	for i := 1; i < job.Attempt && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, maxRetryBackoff))
}
