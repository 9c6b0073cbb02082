package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"
)

// Leases. River knows a job is running, not whether its attempt still is:
// it keeps no liveness of its clients (river_client was dropped unused;
// only the leader has a TTL, in river_leader), JobRetry leaves running
// jobs alone, and its rescuer goes by age alone, so it must outwait the
// job timeout or run live attempts twice. So every attempt of a review
// job holds a lease that PostgreSQL ends when the attempt's process ends:
//
//   - the lease is a session advisory lock on the review's id (leaseKey),
//     taken on a connection of the attempt's own, outside the pool, before
//     the review runs; an attempt that cannot take it does not run (it is
//     snoozed, using up no attempt), so two attempts never run at once;
//   - the attempt then records in its job's metadata (leaseMarker) that
//     the attempt River started at attempted_at holds the lease, an update
//     that matches only while the job still runs that attempt; it takes
//     the marker away before it lets the lock go, since River records its
//     outcome only after Work returns;
//   - a killed process's socket is closed by its kernel, and PostgreSQL
//     ends the session and the lock at once; a lost node's session ends by
//     the keepalive settings of leaseParams, within about 12 s;
//   - the attempt pings its lease connection every second (2 s timeout):
//     when the lease is lost (a database restart, a cut network) it cancels
//     the attempt, which is put back in the queue without using up an
//     attempt (if River cannot record that, the check below puts it back,
//     counted); the server drops a silent client's lock 10 s or more after
//     its last word, long after the attempt stopped;
//   - every replica checks every [DefaultLeaseCheckInterval] for running
//     review jobs marked by their current attempt whose lock it can take
//     (a transaction lock, so nothing outlives the check): their attempt's
//     process is gone. It holds the locks [DefaultLeaseGrace], longer than
//     an attempt takes to learn it lost its lease, then makes those jobs
//     available at once, as River's rescuer would (the lost attempt counts;
//     a job out of attempts is discarded, one whose cancellation was asked
//     is cancelled), if they still run that attempt and bear its marker.
//
// A killed worker's review is thus running again within 16 s (interval,
// grace, a fetch), a lost node's within 28 s. After a database restart
// every lease is gone at once: every attempt stops, and each is resumed
// once the database is back, one attempt at a time. A job whose attempt
// took no lease (its process died in the milliseconds between River's
// fetch and the lock, or after the marker went) is left to River's
// rescuer.
const (
	// DefaultLeaseCheckInterval is how often each replica looks for review
	// jobs whose attempt's lease has ended.
	DefaultLeaseCheckInterval = 10 * time.Second
	// DefaultLeaseGrace is how long the check holds the locks of the jobs
	// it found before it resumes them: more than an attempt takes to learn
	// that its lease is lost (leasePingInterval + leasePingTimeout).
	DefaultLeaseGrace = 5 * time.Second

	leasePingInterval = time.Second
	leasePingTimeout  = 2 * time.Second
	// leaseConnectTimeout bounds opening a lease and closing it.
	leaseConnectTimeout = 10 * time.Second

	// leaseMarker is the river_job metadata key holding the attempted_at
	// of the attempt that holds the job's lease.
	leaseMarker = "codelotse:lease"
	// leaseKey is the advisory lock key of the review id $1 (the tenant
	// advisory locks are transaction locks on other keys).
	leaseKey = `hashtextextended('codelotse review lease ' || $1, 0)`
)

// leaseParams are the lease connection's session settings: PostgreSQL's
// keepalive probes end the session of a node that vanished (5 s idle, then
// 3 probes 2 s apart; data left unacknowledged for 10 s ends it too).
var leaseParams = map[string]string{
	"application_name":        "codelotse review lease",
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "2",
	"tcp_keepalives_count":    "3",
	"tcp_user_timeout":        "10000",
}

var (
	// errLeaseHeld: another session holds the review's lease.
	errLeaseHeld = errors.New("worker: another attempt holds the review's lease")
	// errNotCurrent: the job no longer runs this attempt (it was resumed).
	errNotCurrent = errors.New("worker: the job no longer runs this attempt")
	// errLeaseLost is the cause of an attempt's context cancelled because
	// its lease connection broke.
	errLeaseLost = errors.New("worker: the review's lease was lost")
)

// leases opens review leases on the database of a pool.
type leases struct {
	config *pgx.ConnConfig
}

func newLeases(pool *pgxpool.Pool) *leases {
	cfg := pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for k, v := range leaseParams {
		cfg.RuntimeParams[k] = v
	}
	return &leases{config: cfg}
}

// lease is an attempt's lease: ctx is the attempt's context, cancelled
// with errLeaseLost when the lease connection breaks.
type lease struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	conn   *pgx.Conn
	stop   chan struct{}
	done   chan struct{}
	// job and attemptedAt name the attempt.
	job         int64
	attemptedAt time.Time
}

// take opens the lease of the attempt job (of reviewID) on a connection of
// its own: errLeaseHeld when another session holds it, errNotCurrent when
// the job no longer runs this attempt, another error when the database
// cannot be reached.
func (l *leases) take(ctx context.Context, job *rivertype.JobRow, reviewID string) (_ *lease, err error) {
	if job.AttemptedAt == nil {
		return nil, errNotCurrent
	}
	cctx, cancel := context.WithTimeout(ctx, leaseConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, l.config.Copy())
	if err != nil {
		return nil, fmt.Errorf("worker: open the review's lease: %w", err)
	}
	defer func() {
		if err != nil {
			closeConn(conn)
		}
	}()
	var got bool
	if err := conn.QueryRow(cctx, "SELECT pg_try_advisory_lock("+leaseKey+")", reviewID).Scan(&got); err != nil {
		return nil, fmt.Errorf("worker: take the review's lease: %w", err)
	}
	if !got {
		return nil, errLeaseHeld
	}
	tag, err := conn.Exec(cctx, `UPDATE river_job SET metadata = metadata || jsonb_build_object('`+leaseMarker+`', attempted_at)
		WHERE id = $1 AND state = 'running' AND attempted_at = $2`, job.ID, *job.AttemptedAt)
	if err != nil {
		return nil, fmt.Errorf("worker: record the review's lease: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return nil, errNotCurrent
	}
	lctx, lcancel := context.WithCancelCause(ctx)
	ls := &lease{ctx: lctx, cancel: lcancel, conn: conn, stop: make(chan struct{}), done: make(chan struct{}),
		job: job.ID, attemptedAt: *job.AttemptedAt}
	go ls.watch()
	return ls, nil
}

// watch pings the lease connection until release; when a ping fails it
// cancels the attempt.
func (l *lease) watch() {
	defer close(l.done)
	tick := time.NewTicker(leasePingInterval)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leasePingTimeout)
		err := l.conn.Ping(ctx)
		cancel()
		if err != nil {
			l.cancel(fmt.Errorf("%w: %w", errLeaseLost, err))
			return
		}
	}
}

// release ends the lease. River records the attempt's outcome after
// Work returns, so the job is still running when the lock goes: the
// marker goes first, under the lock, and the check leaves an unmarked job
// alone. Closing the session releases the lock.
func (l *lease) release() {
	close(l.stop)
	<-l.done
	l.cancel(context.Canceled)
	if !l.conn.IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), leasePingTimeout)
		_, _ = l.conn.Exec(ctx, "UPDATE river_job SET metadata = metadata - '"+leaseMarker+"' WHERE id = $1 AND attempted_at = $2",
			l.job, l.attemptedAt)
		cancel()
	}
	closeConn(l.conn)
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseConnectTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}

// resumer makes available again the review jobs whose attempt's lease has
// ended.
type resumer struct {
	pool     *pgxpool.Pool
	log      zerolog.Logger
	interval time.Duration
	grace    time.Duration
}

// run checks at once, then every interval, until ctx is done.
func (r *resumer) run(ctx context.Context) {
	tick := time.NewTicker(r.interval)
	defer tick.Stop()
	for {
		if err := r.check(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn().Err(err).Msg("lease check failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// leased is a running review job whose current attempt took its lease.
type leased struct {
	id          int64
	attempt     int
	attemptedAt time.Time
	reviewID    string
}

// resumeJob makes a job whose attempt is gone available now, as River's
// rescuer (JobRescueMany) does: the lost attempt counts, an error records
// it, river:rescue_count goes up; a job with no attempt left is
// discarded, one whose cancellation was asked is cancelled. It changes
// the job only while it still runs the attempt that was found lost, and
// that attempt's marker is still there (it did not end: its outcome is
// on its way).
const resumeJob = `UPDATE river_job SET
	state = CASE WHEN metadata ? 'cancel_attempted_at' THEN 'cancelled'
	             WHEN attempt >= max_attempts THEN 'discarded'
	             ELSE 'available' END::river_job_state,
	finalized_at = CASE WHEN metadata ? 'cancel_attempted_at' OR attempt >= max_attempts THEN clock_timestamp() END,
	scheduled_at = CASE WHEN metadata ? 'cancel_attempted_at' OR attempt >= max_attempts THEN scheduled_at ELSE clock_timestamp() END,
	errors = array_append(errors, $3::jsonb),
	metadata = metadata || jsonb_build_object('river:rescue_count', coalesce(
		CASE WHEN jsonb_typeof(metadata -> 'river:rescue_count') = 'number' THEN (metadata ->> 'river:rescue_count')::int END, 0) + 1)
	WHERE id = $1 AND state = 'running' AND attempted_at = $2
	  AND (metadata ->> '` + leaseMarker + `')::timestamptz = attempted_at
	RETURNING state::text`

// check resumes the review jobs whose attempt's lease has ended, in one
// transaction whose advisory locks end with it.
func (r *resumer) check(ctx context.Context) error {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows, err := tx.Query(ctx, `SELECT id, attempt, attempted_at, args ->> 'reviewId' FROM river_job
		WHERE kind = $1 AND state = 'running' AND (metadata ->> '`+leaseMarker+`')::timestamptz = attempted_at`, ReviewJobKind)
	if err != nil {
		return err
	}
	running, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (leased, error) {
		var j leased
		err := row.Scan(&j.id, &j.attempt, &j.attemptedAt, &j.reviewID)
		return j, err
	})
	if err != nil {
		return err
	}
	var lost []leased
	for _, j := range running {
		var free bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock("+leaseKey+")", j.reviewID).Scan(&free); err != nil {
			return err
		}
		if free {
			lost = append(lost, j)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	// An attempt whose lease connection broke while its process lives
	// (a database restart) stops within leasePingInterval +
	// leasePingTimeout; the locks held meanwhile keep a new attempt out.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(r.grace):
	}
	type resumed struct {
		j     leased
		state string
	}
	var done []resumed
	for _, j := range lost {
		attemptErr, err := json.Marshal(rivertype.AttemptError{At: time.Now().UTC(), Attempt: j.attempt,
			Error: "lease ended: the attempt's process is gone; resumed"})
		if err != nil {
			return err
		}
		var state string
		err = tx.QueryRow(ctx, resumeJob, j.id, j.attemptedAt, attemptErr).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // it finished, or was put back, meanwhile
		}
		if err != nil {
			return err
		}
		done = append(done, resumed{j, state})
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	for _, d := range done {
		r.log.Warn().Str("reviewId", d.j.reviewID).Int64("jobId", d.j.id).Int("attempt", d.j.attempt).Str("state", d.state).
			Msg("review job resumed: its attempt's lease ended (its worker is gone)")
	}
	return nil
}
