package worker_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/codelotse/codelotse/adapters/worker"
)

type fakeMetrics struct {
	mu       sync.Mutex
	outcomes []string
	kinds    []string
	depth    func(context.Context) (map[string]int64, error)
}

func (f *fakeMetrics) ReviewRun(outcome string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outcomes = append(f.outcomes, outcome)
}

func (f *fakeMetrics) JobLatency(kind string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kinds = append(f.kinds, kind)
}

func (f *fakeMetrics) ObserveQueue(depth func(context.Context) (map[string]int64, error)) {
	f.depth = depth
}

func (f *fakeMetrics) snapshot() (outcomes, kinds []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.outcomes), slices.Clone(f.kinds)
}

// TestReportsRunOutcomesLatencyAndQueueDepth: every attempt is reported
// with its outcome and its wait in the queue, and the queue's depth is
// read from River's table.
func TestReportsRunOutcomesLatencyAndQueueDepth(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	e := newEnv(t)
	m := &fakeMetrics{}
	h := newHandler(func(context.Context) error { return errors.New("model unavailable") })
	stop := start(t, e, h, worker.Options{MaxAttempts: 2, RetryBackoff: 10 * time.Millisecond, Metrics: m})
	if m.depth == nil {
		t.Fatal("New registered no queue depth")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	id := e.enqueue(t)
	depth, err := m.depth(context.Background())
	if err != nil || depth["available"] != 1 || len(depth) != 4 {
		t.Fatalf("depth with one queued job = %v, %v; want available 1 of four states", depth, err)
	}

	start(t, e, h, worker.Options{MaxAttempts: 2, RetryBackoff: 10 * time.Millisecond, Metrics: m})
	e.waitJob(t, id, "cancelled")
	outcomes, kinds := m.snapshot()
	if !slices.Equal(outcomes, []string{"retry", "failed"}) {
		t.Errorf("outcomes = %v, want retry then failed", outcomes)
	}
	if len(kinds) != 2 || kinds[0] != worker.ReviewJobKind {
		t.Errorf("job latency recorded for %v, want the review job twice", kinds)
	}
	if depth, err := m.depth(context.Background()); err != nil || depth["available"] != 0 {
		t.Errorf("depth after the job = %v, %v", depth, err)
	}

	// One span per attempt, with the review's opaque id and the outcome;
	// the tenant's id is not on it.
	var got []string
	for _, sp := range sr.Ended() {
		attrs := map[string]string{}
		for _, kv := range sp.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
			if kv.Value.Emit() == e.tenant {
				t.Errorf("span %q carries the tenant id in %s", sp.Name(), kv.Key)
			}
		}
		if sp.Name() == "review run" && attrs["codelotse.review.id"] == id {
			got = append(got, attrs["codelotse.review.outcome"])
		}
	}
	if !slices.Equal(got, []string{"retry", "failed"}) {
		t.Errorf("review run spans with outcomes %v, want retry then failed", got)
	}
}
