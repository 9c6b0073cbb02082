package reviews_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/ports"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// inFlightAtOnce is how many calls the run's byte budget lets run at
// once: four reservations of 64 KiB fill 256 KiB.
const inFlightAtOnce = limits.RunByteBudget / limits.CallReservation

// callStarts counts the MCP context calls that started (their spans),
// through a tracer provider installed for one test: a call starts its
// span right before it asks the budget for a reservation.
type callStarts struct{ n atomic.Int32 }

func (c *callStarts) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if strings.HasPrefix(s.Name(), "mcp context call ") {
		c.n.Add(1)
	}
}
func (*callStarts) OnEnd(sdktrace.ReadOnlySpan)      {}
func (*callStarts) Shutdown(context.Context) error   { return nil }
func (*callStarts) ForceFlush(context.Context) error { return nil }

func countCallStarts(t *testing.T) *callStarts {
	c := &callStarts{}
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	return c
}

// holdUntilFull answers no call until inFlightAtOnce calls are at the
// server together and all calls of the turn have started (and a moment
// more, for them to reach the budget): so the budget is full while the
// other calls ask for it. Then onFull runs and every call is answered
// at once. After a few seconds without that, the calls are answered
// anyway, and the tests catch it through peak.
func holdUntilFull(t *testing.T, calls int, onFull func()) (answer func(string, json.RawMessage) (ports.ToolResult, error), peak *atomic.Int32) {
	started := countCallStarts(t)
	var inFlight atomic.Int32
	peak = &atomic.Int32{}
	full := make(chan struct{})
	var once sync.Once
	answer = func(string, json.RawMessage) (ports.ToolResult, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n == inFlightAtOnce {
			once.Do(func() {
				for deadline := time.Now().Add(5 * time.Second); started.n.Load() < int32(calls) && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				onFull()
				close(full)
			})
		}
		select {
		case <-full:
		case <-time.After(5 * time.Second):
		}
		return ports.ToolResult{Texts: []string{"ok"}}, nil
	}
	return answer, peak
}

func countStatuses(e *reviewEnv) map[review.CallStatus]int {
	counts := map[review.CallStatus]int{}
	for _, s := range e.statuses() {
		counts[s]++
	}
	return counts
}

// TestParallelCallsWaitForTheBudget: the finder asks for 16 calls in one
// turn, run concurrently as the pipeline runs every turn's calls. Only
// four reservations fit the run's bytes at once; the other calls wait for
// one to end instead of failing, so every call within maxCalls is made
// and only the calls beyond maxCalls are budget_exhausted.
func TestParallelCallsWaitForTheBudget(t *testing.T) {
	for _, tt := range []struct {
		maxCalls, wantOK int
	}{
		{limits.MaxCallsPerRun, 16},
		{10, 10},
	} {
		t.Run(fmt.Sprint("maxCalls ", tt.maxCalls), func(t *testing.T) {
			e := newReviewEnv(t, tt.maxCalls)
			var peak *atomic.Int32
			e.mcp.answer, peak = holdUntilFull(t, 16, func() {})
			args := make([]string, 16)
			for i := range args {
				args[i] = fmt.Sprintf(`{"query": "cache %d"}`, i)
			}
			e.finderCalls(args...)
			run := e.run(t)
			counts := countStatuses(e)
			if counts[review.CallOK] != tt.wantOK || counts[review.CallBudgetExhausted] != 16-tt.wantOK || len(e.statuses()) != 16 {
				t.Errorf("statuses = %v, want %d ok and %d budget_exhausted", counts, tt.wantOK, 16-tt.wantOK)
			}
			if p := int(peak.Load()); p != inFlightAtOnce {
				t.Errorf("%d calls at the server at once, want exactly %d (the budget full, the others waiting)", p, inFlightAtOnce)
			}
			if len(e.mcp.sent) != tt.wantOK || run.Stats().Mcp.Calls != tt.wantOK || run.Stats().Mcp.Bytes != tt.wantOK*len("ok") {
				t.Errorf("sent %d, stats %+v; want %d calls of 2 bytes", len(e.mcp.sent), run.Stats().Mcp, tt.wantOK)
			}
			oks := 0
			for _, a := range e.model.toolAnswers() {
				if strings.Contains(a, "<untrusted") {
					oks++
				}
			}
			if oks != tt.wantOK {
				t.Errorf("the finder got %d results, want %d", oks, tt.wantOK)
			}
		})
	}
}

// TestCallsWaitingWhenTheRunEndsAreBudgetExhausted: the run's context
// ends while four calls are at the server and twelve wait for the budget.
// The four finish; the twelve get no reservation, are recorded as
// budget_exhausted and send nothing, and the run's usage counts them
// neither as reserved nor as sent.
func TestCallsWaitingWhenTheRunEndsAreBudgetExhausted(t *testing.T) {
	e := newReviewEnv(t, limits.MaxCallsPerRun)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var peak *atomic.Int32
	e.mcp.answer, peak = holdUntilFull(t, 16, cancel)
	args := make([]string, 16)
	for i := range args {
		args[i] = `{"query": "cache"}`
	}
	e.finderCalls(args...)
	_ = reviews.NewReviewRunner(e.deps).RunReview(ctx, revTenant, revReview) // the finder fails with the cancelled run
	counts := countStatuses(e)
	if counts[review.CallOK] != inFlightAtOnce || counts[review.CallBudgetExhausted] != 16-inFlightAtOnce || len(e.statuses()) != 16 {
		t.Errorf("statuses = %v, want %d ok and %d budget_exhausted", counts, inFlightAtOnce, 16-inFlightAtOnce)
	}
	if int(peak.Load()) != inFlightAtOnce || len(e.mcp.sent) != inFlightAtOnce {
		t.Errorf("peak %d, sent %d; want %d each", peak.Load(), len(e.mcp.sent), inFlightAtOnce)
	}
	u, err := e.calls.ReviewUsage(context.Background(), revReview)
	if err != nil || u.Reserved != inFlightAtOnce || u.Sent != inFlightAtOnce {
		t.Errorf("usage = %+v (%v), want %d reserved and sent", u, err, inFlightAtOnce)
	}
}
