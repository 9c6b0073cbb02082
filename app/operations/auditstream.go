package operations

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codelotse/codelotse/domain/auditstream"
	"github.com/codelotse/codelotse/ports"
)

// The audit stream's pacing.
const (
	// AuditStreamBatch is how many of a tenant's entries one drain sends.
	AuditStreamBatch = 100
	// AuditStreamMaxPerRun bounds what one run sends, so a backlog is sent
	// over several runs and a run ends within its job's timeout.
	AuditStreamMaxPerRun = 5000
	// auditStreamTenants bounds the tenants one run visits.
	auditStreamTenants = 1000
)

// AuditStreamJob delivers the audit stream: every audit event and call
// record, at least once, to the operator's sink, in order per tenant. The
// outbox holds an entry until the sink accepted it; a tenant whose first
// entry failed waits for its backoff, holding back the rest. The worker
// runs it periodically on one replica, on a queue of its own, so a slow
// or absent sink delays no review.
type AuditStreamJob struct {
	outbox  ports.AuditOutbox
	sink    ports.AuditSink
	metrics ports.AuditStreamMetrics
	clock   ports.Clock
	warn    ports.Warn
}

// NewAuditStreamJob returns the job.
func NewAuditStreamJob(outbox ports.AuditOutbox, sink ports.AuditSink, metrics ports.AuditStreamMetrics, clock ports.Clock, warn ports.Warn) *AuditStreamJob {
	return &AuditStreamJob{outbox: outbox, sink: sink, metrics: metrics, clock: clock, warn: warn}
}

// Deliver sends what is due, tenant after tenant, drain after drain,
// until a tenant's outbox is empty or the sink refuses (a warning names
// the tenant and the status or egress code), or the run's bound is
// reached. It returns the entries delivered and the tenants that failed
// (ports.AuditDelivered, ports.AuditFailed); a database error ends the run.
func (j *AuditStreamJob) Deliver(ctx context.Context) (map[string]int, error) {
	run := map[string]int{ports.AuditDelivered: 0, ports.AuditFailed: 0}
	now := j.clock.Now()
	tenants, err := j.outbox.DueTenants(ctx, now, auditStreamTenants)
	if err != nil {
		return run, fmt.Errorf("audit stream: %w", err)
	}
	drain := ports.OutboxDrain{
		Now:   now,
		Limit: AuditStreamBatch,
		Send:  j.send,
		RetryAt: func(attempts int) time.Time {
			return j.clock.Now().Add(auditstream.RetryDelay(attempts))
		},
	}
	for _, tenant := range tenants {
		for run[ports.AuditDelivered] < AuditStreamMaxPerRun {
			n, err := j.outbox.Drain(ctx, tenant, drain)
			run[ports.AuditDelivered] += n
			var refused *sinkError
			if errors.As(err, &refused) {
				run[ports.AuditFailed]++
				j.warn("audit stream delivery failed; the tenant's events wait for the next attempt",
					map[string]string{"tenantId": tenant, "reason": refused.err.Error()})
				break
			}
			if err != nil {
				return run, fmt.Errorf("audit stream: %w", err)
			}
			if n < drain.Limit {
				break
			}
		}
	}
	return run, nil
}

// sinkError marks a failure of the sink, apart from the outbox's own.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

func (j *AuditStreamJob) send(ctx context.Context, e ports.OutboxEntry) error {
	if err := j.sink.Deliver(ctx, e); err != nil {
		j.metrics.AuditDelivery(ports.AuditFailed)
		return &sinkError{err}
	}
	j.metrics.AuditDelivery(ports.AuditDelivered)
	return nil
}
