package reviews_test

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

var lifecycleT0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// TestSubmitReview: the request's rules are the domain's, answered with
// the contract's codes and reasons; a refused request stores nothing.
func TestSubmitReview(t *testing.T) {
	const newRun = "99999999-0000-4000-8000-000000000001"
	const (
		titleReason = "is required, at most 500 characters"
		pathReason  = "paths must be 1 to 1024 bytes of UTF-8"
	)
	many := map[string]string{}
	for i := range 1001 {
		many["f"+strconv.Itoa(i)] = ""
	}
	ok := reviews.SubmitReview{RepositoryID: revRepo, Title: "Fix it", Description: "why", Diff: "+x"}
	tests := []struct {
		name   string
		change func(*reviews.SubmitReview)
		newID  string
		code   app.Code // "" when accepted
		fields map[string]string
	}{
		{"a request", func(*reviews.SubmitReview) {}, newRun, "", nil},
		{"with files", func(c *reviews.SubmitReview) { c.Files = map[string]string{"a.go": "package a"} }, newRun, "", nil},
		{"a malformed repository id", func(c *reviews.SubmitReview) { c.RepositoryID = "nope" }, newRun, app.CodeNotFound, nil},
		{"a repository the tenant does not have", func(c *reviews.SubmitReview) { c.RepositoryID = revServer }, newRun, app.CodeNotFound, nil},
		{"no title", func(c *reviews.SubmitReview) { c.Title = "" }, newRun, app.CodeValidationFailed, map[string]string{"title": titleReason}},
		{"501 characters of title", func(c *reviews.SubmitReview) { c.Title = strings.Repeat("ü", 501) }, newRun, app.CodeValidationFailed, map[string]string{"title": titleReason}},
		{"no diff", func(c *reviews.SubmitReview) { c.Diff = "" }, newRun, app.CodeValidationFailed, map[string]string{"diff": "is required"}},
		{"1001 files", func(c *reviews.SubmitReview) { c.Files = many }, newRun, app.CodeValidationFailed, map[string]string{"files": "at most 1000 files"}},
		{"an empty path", func(c *reviews.SubmitReview) { c.Files = map[string]string{"": "x"} }, newRun, app.CodeValidationFailed, map[string]string{"files": pathReason}},
		{"everything wrong", func(c *reviews.SubmitReview) { c.Title, c.Diff, c.Files = "", "", map[string]string{"\xff": ""} }, newRun,
			app.CodeValidationFailed, map[string]string{"title": titleReason, "diff": "is required", "files": pathReason}},
		// An id the handler chose that is not a UUID is its own fault,
		// not the request's.
		{"a malformed new id", func(*reviews.SubmitReview) {}, "not-a-uuid", app.CodeInternal, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newReviewEnv(t, 5)
			delete(e.reviews.Runs, revReview)
			h := reviews.NewSubmitReviewHandler(reviews.Deps{Tenants: e.tenants, Clock: &portfake.Clock{At: lifecycleT0},
				NewID: func() string { return tt.newID }})
			cmd := ok
			tt.change(&cmd)
			run, err := h.Handle(context.Background(), admin(), cmd)
			if tt.code != "" {
				if got := app.AsError(err); got.Code != tt.code || !maps.Equal(got.Fields, tt.fields) {
					t.Errorf("Submit = %s %v (%v), want %s %v", got.Code, got.Fields, err, tt.code, tt.fields)
				}
				if run != nil || len(e.reviews.Runs) != 0 {
					t.Errorf("a refused request stored %d runs", len(e.reviews.Runs))
				}
				return
			}
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			stored := e.reviews.Runs[tt.newID]
			for _, r := range []*review.Run{run, stored} {
				if r == nil || r.ID() != tt.newID || r.RepositoryID() != revRepo || r.Status() != review.Queued ||
					!r.CreatedAt().Equal(lifecycleT0) || r.Title() != cmd.Title || r.Diff() != cmd.Diff || r.Files() == nil ||
					len(r.Files()) != len(cmd.Files) {
					t.Errorf("submitted run = %+v", r)
				}
			}
		})
	}
}

// runAt puts the run revReview in a state: queued, running, done or
// failed.
func runAt(t *testing.T, e *reviewEnv, state review.RunStatus) *review.Run {
	t.Helper()
	run := queuedRun(t, "")
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	switch state {
	case review.Running:
		step(run.Start(lifecycleT0.Add(time.Minute)))
	case review.Done:
		step(run.Start(lifecycleT0.Add(time.Minute)))
		step(run.Complete(lifecycleT0.Add(2*time.Minute), review.Result{PromptVersion: "earlier", Summary: "the first result"}))
	case review.Failed:
		step(run.Fail(lifecycleT0.Add(2 * time.Minute)))
	}
	e.reviews.Runs[revReview] = run
	c := *run
	return &c
}

// runView is what a run shows, for comparisons.
func runView(r *review.Run) map[string]any {
	return map[string]any{"status": r.Status(), "started": r.StartedAt(), "finished": r.FinishedAt(), "result": r.Result(), "request": r.Request()}
}

// TestFailReview: the worker's last-attempt callback fails a queued or
// running run and leaves a finished or missing one alone.
func TestFailReview(t *testing.T) {
	now := lifecycleT0.Add(time.Hour)
	for _, tt := range []struct {
		from          review.RunStatus
		want          review.RunStatus
		started, fini time.Time
	}{
		{review.Queued, review.Failed, time.Time{}, now},
		{review.Running, review.Failed, lifecycleT0.Add(time.Minute), now},
		{review.Done, review.Done, lifecycleT0.Add(time.Minute), lifecycleT0.Add(2 * time.Minute)},
		{review.Failed, review.Failed, time.Time{}, lifecycleT0.Add(2 * time.Minute)},
	} {
		t.Run(string(tt.from), func(t *testing.T) {
			e := newReviewEnv(t, 5)
			before := runAt(t, e, tt.from)
			e.deps.Clock = &portfake.Clock{At: now}
			if err := reviews.NewReviewRunner(e.deps).FailReview(context.Background(), revTenant, revReview); err != nil {
				t.Fatalf("FailReview: %v", err)
			}
			got := e.reviews.Runs[revReview]
			if got.Status() != tt.want || !got.StartedAt().Equal(tt.started) || !got.FinishedAt().Equal(tt.fini) {
				t.Errorf("FailReview of a %s run: %s, started %v, finished %v; want %s, %v, %v",
					tt.from, got.Status(), got.StartedAt(), got.FinishedAt(), tt.want, tt.started, tt.fini)
			}
			if tt.from.Finished() {
				if diff := cmp.Diff(runView(before), runView(got)); diff != "" {
					t.Errorf("a finished run changed (-before +after):\n%s", diff)
				}
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		e := newReviewEnv(t, 5)
		delete(e.reviews.Runs, revReview)
		if err := reviews.NewReviewRunner(e.deps).FailReview(context.Background(), revTenant, revReview); err != nil {
			t.Errorf("FailReview of a missing run: %v", err)
		}
	})
}

// TestRunReviewLeavesAFinishedRunAlone: an attempt on a finished run (an
// earlier attempt finished it) reads nothing else, asks no model, opens
// no MCP session and changes nothing.
func TestRunReviewLeavesAFinishedRunAlone(t *testing.T) {
	for _, state := range []review.RunStatus{review.Done, review.Failed} {
		t.Run(string(state), func(t *testing.T) {
			e := newReviewEnv(t, 5)
			e.finderCalls(`{"query": "cache"}`)
			before := runAt(t, e, state)
			if err := reviews.NewReviewRunner(e.deps).RunReview(context.Background(), revTenant, revReview); err != nil {
				t.Fatalf("RunReview: %v", err)
			}
			if diff := cmp.Diff(runView(before), runView(e.reviews.Runs[revReview])); diff != "" {
				t.Errorf("the %s run changed (-before +after):\n%s", state, diff)
			}
			if len(e.model.reqs) != 0 || e.mcp.opened != 0 || len(e.calls.Records) != 0 {
				t.Errorf("%d model requests, %d sessions, %d call records; want none", len(e.model.reqs), e.mcp.opened, len(e.calls.Records))
			}
		})
	}
}

// finishingModel finishes the run, as another attempt would, when the
// summary step is asked.
type finishingModel struct {
	ports.Model
	finish func()
}

func (m finishingModel) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	if req.Step == ports.StepSummary {
		m.finish()
	}
	return m.Model.Complete(ctx, req)
}

// TestALateAttemptKeepsTheFirstResult: two attempts run the same run (a
// rescued job whose first attempt was still alive); the one that finishes
// second is refused by the store and the first result stays.
func TestALateAttemptKeepsTheFirstResult(t *testing.T) {
	e := newReviewEnv(t, 5)
	e.finderCalls(`{"query": "cache"}`)
	var first map[string]any
	e.deps.Model = finishingModel{Model: e.model, finish: func() {
		other, err := e.reviews.Get(context.Background(), revReview)
		if err != nil {
			t.Error(err)
			return
		}
		if err := other.Fail(lifecycleT0.Add(time.Minute)); err != nil {
			t.Error(err)
		}
		if err := e.reviews.Finish(context.Background(), other); err != nil {
			t.Error(err)
		}
		first = runView(other)
	}}
	if err := reviews.NewReviewRunner(e.deps).RunReview(context.Background(), revTenant, revReview); err != nil {
		t.Fatalf("RunReview: %v", err)
	}
	if diff := cmp.Diff(first, runView(e.reviews.Runs[revReview])); first == nil || diff != "" {
		t.Errorf("the late attempt overwrote the first result (-first +stored):\n%s", diff)
	}
}
