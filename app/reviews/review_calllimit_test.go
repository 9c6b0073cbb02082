package reviews_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// A server's calls-per-minute limit (MC8), counted in the store across
// the tenant's reviews: a call over it is rate_limited and not sent.

const revReview2 = "77777777-0000-4000-8000-000000000002"

// limitServer gives the run's server a calls-per-minute limit.
func (e *reviewEnv) limitServer(t *testing.T, perMinute int) {
	t.Helper()
	l, err := server.ParseCallLimit(&perMinute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.servers.Rows[revServer].Apply(server.Patch{MaxCallsPerMinute: &l}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// takeSpy counts the store's TakeCall queries and fails them with err.
type takeSpy struct {
	*portfake.Servers
	takes atomic.Int32
	err   error
}

func (s *takeSpy) TakeCall(ctx context.Context, id string, limit int, window time.Duration) (bool, error) {
	s.takes.Add(1)
	if s.err != nil {
		return false, s.err
	}
	return s.Servers.TakeCall(ctx, id, limit, window)
}

// spyTakes routes the run's server store through a takeSpy.
func (e *reviewEnv) spyTakes(err error) *takeSpy {
	spy := &takeSpy{Servers: e.servers, err: err}
	e.tenants.NewTx = func(string) *portfake.Tx {
		return &portfake.Tx{ServerRepo: spy, RepositoryRepo: e.repos, PolicyRepo: e.policies, ReviewRepo: e.reviews, CallLog: e.calls}
	}
	return spy
}

// statusesOf are the call statuses of one review, in order.
func (e *reviewEnv) statusesOf(reviewID string) []review.CallStatus {
	var out []review.CallStatus
	for _, c := range e.calls.Records {
		if c.ReviewID == reviewID {
			out = append(out, c.Status)
		}
	}
	return out
}

// TestACallOverTheServersLimitIsNotSent: with a limit of 1 a minute, the
// second call of a run is rate_limited and never reaches the server; a
// limit above the instance's cap counts as the cap.
func TestACallOverTheServersLimitIsNotSent(t *testing.T) {
	for _, tt := range []struct {
		name      string
		perMinute int
		cap       int // 0: the default
	}{
		{"a limit of 1", 1, 0},
		{"a limit of 5 under a cap of 1", 5, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := egressRun(t, []string{query("one")}, []string{query("two")})
			e.limitServer(t, tt.perMinute)
			if tt.cap != 0 {
				c, err := server.ParseCallCap(tt.cap)
				if err != nil {
					t.Fatal(err)
				}
				e.deps.CallCap = c
			}
			e.run(t)
			want := []review.CallStatus{review.CallOK, review.CallRateLimited}
			if got := e.statuses(); fmt.Sprint(got) != fmt.Sprint(want) || len(e.mcp.sent) != 1 {
				t.Errorf("statuses %v, sent %q; want %v and the first call only", got, e.mcp.sent, want)
			}
			answers := e.model.toolAnswers()
			if len(answers) != 2 || answers[1] != `{"error": "rate_limited: the server's calls-per-minute limit is reached; nothing was sent"}` {
				t.Errorf("the model was answered %q", answers)
			}
			if n := e.metrics.get(review.CallRateLimited); n != 1 {
				t.Errorf("rate_limited counted %d times, want 1", n)
			}
			if run := e.reviews.Runs[revReview]; run.Status() != review.Done || run.Stats().Mcp.Calls != 1 {
				t.Errorf("run %s, %d calls sent; want done, 1", run.Status(), run.Stats().Mcp.Calls)
			}
		})
	}
}

// TestConcurrentCallsShareTheLimit: two calls of one turn, at once, under
// a limit of 1: one is sent, the other is rate_limited.
func TestConcurrentCallsShareTheLimit(t *testing.T) {
	e := egressRun(t, []string{query("one"), query("two")})
	e.limitServer(t, 1)
	e.run(t)
	ok, limited := 0, 0
	for _, s := range e.statuses() {
		switch s {
		case review.CallOK:
			ok++
		case review.CallRateLimited:
			limited++
		}
	}
	if ok != 1 || limited != 1 || len(e.mcp.sent) != 1 {
		t.Errorf("statuses %v, %d sent; want one ok and one rate_limited, one sent", e.statuses(), len(e.mcp.sent))
	}
}

// TestTwoReviewsShareTheServersLimit: the count is the store's, not the
// run's: under a limit of 2, a second review in the same minute gets
// what the first left, and a third review nothing.
func TestTwoReviewsShareTheServersLimit(t *testing.T) {
	e := egressRun(t, []string{query("one")})
	e.limitServer(t, 2)
	e.run(t)
	script := func() {
		e.model.turns[ports.StepFinder] = []ports.ModelResponse{
			{ToolCalls: []ports.ModelToolCall{{ID: "a", Name: "mcp_wiki_search", Arguments: json.RawMessage(query("a"))}}},
			{ToolCalls: []ports.ModelToolCall{{ID: "b", Name: "mcp_wiki_search", Arguments: json.RawMessage(query("b"))}}},
			{Content: `{"findings": []}`},
		}
		e.model.turns[ports.StepSummary] = []ports.ModelResponse{{Content: "Adds a cache."}}
	}
	script()
	second, err := review.NewRun(revReview2, revRepo, review.Request{Title: "Another", Diff: "+x := 1\n", Files: map[string]string{"a.go": "x := 1\n"}},
		time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	e.reviews.Runs[revReview2] = second
	if err := reviews.NewReviewRunner(e.deps).RunReview(context.Background(), revTenant, revReview2); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(e.statusesOf(revReview)), fmt.Sprint([]review.CallStatus{review.CallOK}); got != want {
		t.Errorf("the first review's calls %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(e.statusesOf(revReview2)), fmt.Sprint([]review.CallStatus{review.CallOK, review.CallRateLimited}); got != want {
		t.Errorf("the second review's calls %s, want %s", got, want)
	}
	if len(e.mcp.sent) != 2 {
		t.Errorf("sent %q, want two calls over both reviews", e.mcp.sent)
	}
}

// TestTheLimitStartsAgainEachMinute: the store counts per minute of its
// clock: a call a minute after the last one is sent again.
func TestTheLimitStartsAgainEachMinute(t *testing.T) {
	e := egressRun(t, []string{query("one")}, []string{query("two")}, []string{query("three")})
	e.limitServer(t, 1)
	clock := e.deps.Clock.(*portfake.Clock)
	e.servers.Clock = clock
	step := time.Minute
	e.deps.Model = clockedModel{Model: e.deps.Model, clock: clock, step: step}
	e.run(t)
	want := []review.CallStatus{review.CallOK, review.CallOK, review.CallOK}
	if got := e.statuses(); fmt.Sprint(got) != fmt.Sprint(want) || len(e.mcp.sent) != 3 {
		t.Errorf("statuses %v, %d sent; want %v", got, len(e.mcp.sent), want)
	}
}

// TestACallWhoseLimitCannotBeCountedIsNotSent: when the store cannot
// count the call, it is not sent (fail closed) and is recorded
// rate_limited, which does not count as sent.
func TestACallWhoseLimitCannotBeCountedIsNotSent(t *testing.T) {
	e := egressRun(t, []string{query("one")})
	e.limitServer(t, 100)
	var warned []string
	e.deps.Warn = func(msg string, _ map[string]string) { warned = append(warned, msg) }
	spy := e.spyTakes(fmt.Errorf("take call: %w", errors.Join(ports.ErrUnavailable, errors.New("connection refused"))))
	e.run(t)
	if got := e.statuses(); fmt.Sprint(got) != fmt.Sprint([]review.CallStatus{review.CallRateLimited}) || len(e.mcp.sent) != 0 || spy.takes.Load() != 1 {
		t.Errorf("statuses %v, sent %q, %d takes; want rate_limited, nothing sent, one take", got, e.mcp.sent, spy.takes.Load())
	}
	if run := e.reviews.Runs[revReview]; run.Status() != review.Done || run.Stats().Mcp.Calls != 0 {
		t.Errorf("run %s, %d calls sent; want done, none", run.Status(), run.Stats().Mcp.Calls)
	}
	if fmt.Sprint(warned) != "[mcp call not sent: its calls-per-minute limit could not be counted]" {
		t.Errorf("warned %q", warned)
	}
}

// TestAServerWithoutALimitCostsNoQuery: only a server with a limit pays
// the store's round trip.
func TestAServerWithoutALimitCostsNoQuery(t *testing.T) {
	e := egressRun(t, []string{query("one")}, []string{query("two")})
	spy := e.spyTakes(errors.New("TakeCall must not be called"))
	e.run(t)
	if got := e.statuses(); fmt.Sprint(got) != fmt.Sprint([]review.CallStatus{review.CallOK, review.CallOK}) || spy.takes.Load() != 0 {
		t.Errorf("statuses %v, %d takes; want two ok calls and no take", got, spy.takes.Load())
	}
}
