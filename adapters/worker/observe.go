package worker

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/codelotse/codelotse/ports"
)

// Metrics is what the worker reports (adapters/metrics implements it).
type Metrics interface {
	// ReviewRun records one attempt: done, retry, failed or interrupted.
	ReviewRun(outcome string, d time.Duration)
	// JobLatency records how long a job waited between its scheduled time
	// and the start of its attempt.
	JobLatency(kind string, d time.Duration)
	// ObserveQueue registers the queue's depth, read at every scrape.
	ObserveQueue(depth func(context.Context) (map[string]int64, error))
}

// TracerName names this package's OpenTelemetry tracer.
const TracerName = "github.com/codelotse/codelotse/adapters/worker"

// queueDepth counts the jobs waiting or running, by state, across every
// queue. The review id and tenant id are in the job's args, never read.
func queueDepth(pool *pgxpool.Pool) func(context.Context) (map[string]int64, error) {
	return func(ctx context.Context) (map[string]int64, error) {
		rows, err := pool.Query(ctx, `SELECT state::text, count(*) FROM river_job
			WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY state`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		depth := map[string]int64{"available": 0, "scheduled": 0, "retryable": 0, "running": 0}
		for rows.Next() {
			var state string
			var n int64
			if err := rows.Scan(&state, &n); err != nil {
				return nil, err
			}
			depth[state] = n
		}
		return depth, rows.Err()
	}
}

// observed wraps one review attempt in a span ("review run", with the
// review's opaque id and the attempt) and records its latency, duration
// and outcome.
func (w *reviewWorker) observed(ctx context.Context, job *river.Job[ports.ReviewJob], work func(context.Context) error) error {
	start := time.Now()
	if w.metrics != nil && job.AttemptedAt != nil {
		w.metrics.JobLatency(job.Kind, job.AttemptedAt.Sub(job.ScheduledAt))
	}
	ctx, span := otel.Tracer(TracerName).Start(ctx, "review run", trace.WithAttributes(
		attribute.String("codelotse.review.id", job.Args.ReviewID), attribute.Int("codelotse.review.attempt", job.Attempt)))
	err := work(ctx)
	outcome := runOutcome(err)
	span.SetAttributes(attribute.String("codelotse.review.outcome", outcome))
	if outcome != "done" {
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
	if w.metrics != nil {
		w.metrics.ReviewRun(outcome, time.Since(start))
	}
	return err
}

func runOutcome(err error) string {
	var cancel *rivertype.JobCancelError
	switch {
	case err == nil:
		return "done"
	case errors.As(err, &cancel):
		return "failed"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return "retry"
}
