package review

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

const (
	runID  = "11111111-2222-4333-8444-555555555555"
	repoID = "66666666-7777-4888-8999-aaaaaaaaaaaa"
)

var (
	t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) // created
	t1 = t0.Add(time.Minute)                          // started
	t2 = t0.Add(2 * time.Minute)                      // finished
	t3 = t0.Add(3 * time.Minute)                      // the transition under test
)

func request() Request {
	return Request{Title: "Add a cache", Description: "why", Diff: "+cache := map[string]string{}\n",
		Files: map[string]string{"a.go": "package a\n"}}
}

func result() Result {
	prompt := "mcp-v1"
	return Result{PromptVersion: "review-v1.5", Summary: "Adds a cache.",
		Findings: []Finding{{Path: "a.go", Line: 1, Title: "Unbounded", Body: "b", Evidence: "cache := map"}},
		Stats:    Stats{Mcp: McpStats{Prompt: &prompt, Calls: 2, Bytes: 40, Blocked: 1, Servers: []ServerOutcome{{ID: repoID, Name: "wiki", Offered: true}}}}}
}

func queuedRun(t *testing.T) *Run {
	t.Helper()
	r, err := NewRun(runID, repoID, request(), t0)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	return r
}

// runIn returns a run in one of the states, reached through the
// transitions: queued, running (started t1), done (t2), failed after
// running (t2) or failed without having run (t2).
func runIn(t *testing.T, state string) *Run {
	t.Helper()
	r := queuedRun(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("reaching %s: %v", state, err)
		}
	}
	switch state {
	case "queued":
	case "running":
		must(r.Start(t1))
	case "done":
		must(r.Start(t1))
		must(r.Complete(t2, result()))
	case "failed":
		must(r.Start(t1))
		must(r.Fail(t2))
	case "failed-unstarted":
		must(r.Fail(t2))
	default:
		t.Fatalf("no state %q", state)
	}
	return r
}

// TestRunTransitions is the whole matrix: every state a run can be in ×
// every transition, allowed or refused, with the times it records. A
// refused transition changes nothing.
func TestRunTransitions(t *testing.T) {
	transitions := map[string]func(*Run) error{
		"Start":    func(r *Run) error { return r.Start(t3) },
		"Complete": func(r *Run) error { return r.Complete(t3, result()) },
		"Fail":     func(r *Run) error { return r.Fail(t3) },
	}
	tests := []struct {
		from, by     string
		err          error
		want         RunStatus
		started, fin time.Time
		hasResult    bool
	}{
		{"queued", "Start", nil, Running, t3, time.Time{}, false},
		{"queued", "Complete", ErrRunNotStarted, Queued, time.Time{}, time.Time{}, false}, // never done without running
		{"queued", "Fail", nil, Failed, time.Time{}, t3, false},                           // a job that gave up before starting

		{"running", "Start", nil, Running, t1, time.Time{}, false}, // a rescued attempt continues: the first start stays
		{"running", "Complete", nil, Done, t1, t3, true},
		{"running", "Fail", nil, Failed, t1, t3, false},

		// A finished run never moves: done never becomes failed, nor
		// failed done, nor either running again.
		{"done", "Start", ErrRunFinished, Done, t1, t2, true},
		{"done", "Complete", ErrRunFinished, Done, t1, t2, true},
		{"done", "Fail", ErrRunFinished, Done, t1, t2, true},
		{"failed", "Start", ErrRunFinished, Failed, t1, t2, false},
		{"failed", "Complete", ErrRunFinished, Failed, t1, t2, false},
		{"failed", "Fail", ErrRunFinished, Failed, t1, t2, false},
		{"failed-unstarted", "Start", ErrRunFinished, Failed, time.Time{}, t2, false},
		{"failed-unstarted", "Complete", ErrRunFinished, Failed, time.Time{}, t2, false},
		{"failed-unstarted", "Fail", ErrRunFinished, Failed, time.Time{}, t2, false},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.from+"/"+tt.by] = true
		t.Run(tt.from+"/"+tt.by, func(t *testing.T) {
			r := runIn(t, tt.from)
			before := *r
			err := transitions[tt.by](r)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("%s of a %s run = %v, want %v", tt.by, tt.from, err, tt.err)
			}
			if err != nil && !reflect.DeepEqual(*r, before) {
				t.Errorf("the refused %s changed the run:\n%+v\nwas %+v", tt.by, *r, before)
			}
			if r.Status() != tt.want || !r.StartedAt().Equal(tt.started) || !r.FinishedAt().Equal(tt.fin) {
				t.Errorf("after %s: %s, started %v, finished %v; want %s, %v, %v",
					tt.by, r.Status(), r.StartedAt(), r.FinishedAt(), tt.want, tt.started, tt.fin)
			}
			if !r.CreatedAt().Equal(t0) {
				t.Errorf("created %v, want %v", r.CreatedAt(), t0)
			}
			if got := reflect.DeepEqual(r.Result(), result()); got != tt.hasResult {
				t.Errorf("result %+v; want a result: %v", r.Result(), tt.hasResult)
			}
			if req := r.Request(); !reflect.DeepEqual(req, request()) {
				t.Errorf("request changed: %+v", req)
			}
		})
	}
	for _, from := range []string{"queued", "running", "done", "failed", "failed-unstarted"} {
		for by := range transitions {
			if !covered[from+"/"+by] {
				t.Errorf("the matrix misses %s of a %s run", by, from)
			}
		}
	}
}

func TestCompleteNeedsThePromptVersion(t *testing.T) {
	r := runIn(t, "running")
	before := *r
	res := result()
	res.PromptVersion = ""
	if err := r.Complete(t3, res); !errors.Is(err, ErrPromptVersionRequired) {
		t.Fatalf("Complete without a prompt version = %v", err)
	}
	if !reflect.DeepEqual(*r, before) {
		t.Errorf("the refused Complete changed the run")
	}
}

// TestRunTimesKeepTheirOrder: a clock behind the run (another replica's)
// never puts a start before the creation or a finish before the start.
func TestRunTimesKeepTheirOrder(t *testing.T) {
	early := t0.Add(-time.Hour)
	r := queuedRun(t)
	if err := r.Start(early); err != nil || !r.StartedAt().Equal(t0) {
		t.Errorf("Start before the creation: started %v, %v; want %v", r.StartedAt(), err, t0)
	}
	r = runIn(t, "running")
	if err := r.Complete(t0, result()); err != nil || !r.FinishedAt().Equal(t1) {
		t.Errorf("Complete before the start: finished %v, %v; want %v", r.FinishedAt(), err, t1)
	}
	r = runIn(t, "running")
	if err := r.Fail(early); err != nil || !r.FinishedAt().Equal(t1) {
		t.Errorf("Fail before the start: finished %v, %v; want %v", r.FinishedAt(), err, t1)
	}
	r = queuedRun(t)
	if err := r.Fail(early); err != nil || !r.FinishedAt().Equal(t0) {
		t.Errorf("Fail of a queued run before its creation: finished %v, %v; want %v", r.FinishedAt(), err, t0)
	}
	// Whatever the clocks did, the run loads again.
	if _, err := UnmarshalRunFromDatabase(r.ID(), r.RepositoryID(), r.Status(), r.Request(), r.Result(), r.CreatedAt(), r.StartedAt(), r.FinishedAt()); err != nil {
		t.Errorf("the run does not load: %v", err)
	}
}

func fieldsOf(err error) map[string]string {
	out := map[string]string{}
	var j interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &j) {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var fe *field.Error
		if errors.As(e, &fe) {
			out[fe.Field] = fe.Reason
		}
	}
	return out
}

func files(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m["f"+strconv.Itoa(i)+".go"] = "x"
	}
	return m
}

func TestNewRun(t *testing.T) {
	const (
		titleReason = "is required, at most 500 characters"
		pathReason  = "paths must be 1 to 1024 bytes of UTF-8"
	)
	big := strings.Repeat("x", limits.MaxReviewRequestBody+1)
	tests := []struct {
		name       string
		id, repo   string
		req        func(*Request)
		now        time.Time
		wantFields map[string]string // nil: accepted
	}{
		{"a request", runID, repoID, func(*Request) {}, t0, nil},
		{"no description and no files", runID, repoID, func(r *Request) { r.Description, r.Files = "", nil }, t0, nil},
		{"500 characters of title, in two-byte runes", runID, repoID, func(r *Request) { r.Title = strings.Repeat("é", 500) }, t0, nil},
		{"1000 files", runID, repoID, func(r *Request) { r.Files = files(1000) }, t0, nil},
		{"a path of 1024 bytes", runID, repoID, func(r *Request) { r.Files = map[string]string{strings.Repeat("p", 1024): ""} }, t0, nil},

		{"a malformed id", "not-a-uuid", repoID, func(*Request) {}, t0, map[string]string{"id": "must be a UUID"}},
		{"an upper-case id", strings.ToUpper(repoID), repoID, func(*Request) {}, t0, map[string]string{"id": "must be a UUID"}},
		{"an id in braces", "{" + runID[1:35] + "}", repoID, func(*Request) {}, t0, map[string]string{"id": "must be a UUID"}},
		{"no id", "", repoID, func(*Request) {}, t0, map[string]string{"id": "must be a UUID"}},
		{"a malformed repository", runID, repoID + "0", func(*Request) {}, t0, map[string]string{"repositoryId": "must be a UUID"}},
		{"no time", runID, repoID, func(*Request) {}, time.Time{}, map[string]string{"createdAt": "is required"}},

		{"no title", runID, repoID, func(r *Request) { r.Title = "" }, t0, map[string]string{"title": titleReason}},
		{"501 characters of title", runID, repoID, func(r *Request) { r.Title = strings.Repeat("é", 501) }, t0, map[string]string{"title": titleReason}},
		{"no diff", runID, repoID, func(r *Request) { r.Diff = "" }, t0, map[string]string{"diff": "is required"}},
		{"a diff above the body cap", runID, repoID, func(r *Request) { r.Diff = big }, t0, map[string]string{"diff": "at most 8388608 bytes"}},
		{"1001 files", runID, repoID, func(r *Request) { r.Files = files(1001) }, t0, map[string]string{"files": "at most 1000 files"}},
		{"an empty path", runID, repoID, func(r *Request) { r.Files = map[string]string{"": "x"} }, t0, map[string]string{"files": pathReason}},
		{"a path of 1025 bytes", runID, repoID, func(r *Request) { r.Files = map[string]string{strings.Repeat("p", 1025): ""} }, t0, map[string]string{"files": pathReason}},
		{"a path that is not UTF-8", runID, repoID, func(r *Request) { r.Files = map[string]string{"a\xff.go": ""} }, t0, map[string]string{"files": pathReason}},
		{"too many files, one with a bad path: the path is reported", runID, repoID, func(r *Request) {
			r.Files = files(1001)
			r.Files[""] = ""
		}, t0, map[string]string{"files": pathReason}},
		{"contents above the body cap", runID, repoID, func(r *Request) {
			r.Files = map[string]string{"a": big[:limits.MaxReviewRequestBody/2], "b": big[:limits.MaxReviewRequestBody/2+1]}
		}, t0,
			map[string]string{"files": "at most 8388608 bytes in all"}},
		{"every field wrong: each reported", runID, repoID, func(r *Request) { r.Title, r.Diff, r.Files = "", "", map[string]string{"": ""} }, t0,
			map[string]string{"title": titleReason, "diff": "is required", "files": pathReason}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request()
			tt.req(&req)
			r, err := NewRun(tt.id, tt.repo, req, tt.now)
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("NewRun: %v", err)
				}
				if r.Status() != Queued || r.ID() != tt.id || r.RepositoryID() != tt.repo || !r.CreatedAt().Equal(tt.now) ||
					!r.StartedAt().IsZero() || !r.FinishedAt().IsZero() || r.Title() != req.Title || r.Description() != req.Description ||
					r.Diff() != req.Diff || len(r.Files()) != len(req.Files) || r.Files() == nil ||
					!reflect.DeepEqual(r.Result(), Result{Findings: []Finding{}}) {
					t.Errorf("NewRun = %+v", *r)
				}
				return
			}
			if r != nil || err == nil {
				t.Fatalf("NewRun accepted %s", tt.name)
			}
			if got := fieldsOf(err); !reflect.DeepEqual(got, tt.wantFields) {
				t.Errorf("fields = %v, want %v", got, tt.wantFields)
			}
		})
	}
}

// TestRunIsNotChangedThroughItsInputsOrGetters: a Run copies what it is
// given and what it gives, so no caller changes a run but through its
// transitions.
func TestRunIsNotChangedThroughItsInputsOrGetters(t *testing.T) {
	req, res := request(), result()
	r, err := NewRun(runID, repoID, req, t0)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Start(t1)
	if err := r.Complete(t2, res); err != nil {
		t.Fatal(err)
	}
	req.Files["a.go"], req.Files["b.go"] = "changed", "new"
	res.Findings[0].Title = "changed"
	*res.Stats.Mcp.Prompt = "changed"
	res.Stats.Mcp.Servers[0].Name = "changed"
	r.Files()["a.go"] = "changed"
	r.Request().Files["a.go"] = "changed"
	r.Findings()[0].Title = "changed"
	r.Result().Findings[0].Title = "changed"
	*r.Stats().Mcp.Prompt = "changed"
	r.Stats().Mcp.Servers[0].Name = "changed"
	*r.Result().Stats.Mcp.Prompt = "changed"
	if !reflect.DeepEqual(r.Request(), request()) || !reflect.DeepEqual(r.Result(), result()) {
		t.Errorf("the run changed through its inputs or getters: %+v %+v", r.Request(), r.Result())
	}
}

func TestUnmarshalRunFromDatabase(t *testing.T) {
	none := time.Time{}
	type row struct {
		id, repo        string
		status          RunStatus
		req             Request
		res             Result
		created, st, fi time.Time
	}
	good := map[RunStatus]row{
		Queued:  {runID, repoID, Queued, request(), Result{}, t0, none, none},
		Running: {runID, repoID, Running, request(), Result{}, t0, t1, none},
		Done:    {runID, repoID, Done, request(), result(), t0, t1, t2},
		Failed:  {runID, repoID, Failed, request(), Result{}, t0, t1, t2},
	}
	tests := []struct {
		name   string
		from   RunStatus
		change func(*row)
		ok     bool
	}{
		{"queued", Queued, func(*row) {}, true},
		{"running", Running, func(*row) {}, true},
		{"done", Done, func(*row) {}, true},
		{"failed", Failed, func(*row) {}, true},
		{"failed without having run", Failed, func(r *row) { r.st = none }, true},
		{"every time the same", Done, func(r *row) { r.st, r.fi = t0, t0 }, true},
		{"no files", Done, func(r *row) { r.req.Files = nil }, true},
		{"a done run without findings or stats", Done, func(r *row) { r.res.Findings, r.res.Stats = nil, Stats{} }, true},

		{"no status", Queued, func(r *row) { r.status = "" }, false},
		{"an unknown status", Running, func(r *row) { r.status = "cancelled" }, false},
		{"a status in capitals", Done, func(r *row) { r.status = "DONE" }, false},
		{"a malformed id", Queued, func(r *row) { r.id = "not-a-uuid" }, false},
		{"a malformed repository", Queued, func(r *row) { r.repo = "" }, false},
		{"no creation time", Queued, func(r *row) { r.created = none }, false},
		{"a queued run with a start", Queued, func(r *row) { r.st = t1 }, false},
		{"a queued run with a finish", Queued, func(r *row) { r.fi = t2 }, false},
		{"a running run without a start", Running, func(r *row) { r.st = none }, false},
		{"a running run with a finish", Running, func(r *row) { r.fi = t2 }, false},
		{"a done run without a finish", Done, func(r *row) { r.fi = none }, false},
		{"a done run without a start", Done, func(r *row) { r.st = none }, false},
		{"a failed run without a finish", Failed, func(r *row) { r.fi = none }, false},
		{"started before it was created", Running, func(r *row) { r.st = t0.Add(-time.Second) }, false},
		{"finished before it started", Done, func(r *row) { r.fi = t1.Add(-time.Nanosecond) }, false},
		{"finished before it was created, never started", Failed, func(r *row) { r.st, r.fi = none, t0.Add(-time.Second) }, false},
		{"a done run without its prompt version", Done, func(r *row) { r.res.PromptVersion = "" }, false},
		{"a queued run with findings", Queued, func(r *row) { r.res.Findings = result().Findings }, false},
		{"a running run with a summary", Running, func(r *row) { r.res.Summary = "s" }, false},
		{"a failed run with a prompt version", Failed, func(r *row) { r.res.PromptVersion = "review-v1.5" }, false},
		{"no title", Done, func(r *row) { r.req.Title = "" }, false},
		{"a title of 501 characters", Done, func(r *row) { r.req.Title = strings.Repeat("t", 501) }, false},
		{"1001 files", Queued, func(r *row) { r.req.Files = files(1001) }, false},
		{"a path that is not UTF-8", Queued, func(r *row) { r.req.Files = map[string]string{"\xfe": ""} }, false},
		{"a diff above the body cap", Queued, func(r *row) { r.req.Diff = strings.Repeat("x", limits.MaxReviewRequestBody+1) }, false},
		// A run read whole has its diff: NewRun requires one, so a row
		// without it is not a run (a listing's rows are the other
		// loader's).
		{"no diff", Running, func(r *row) { r.req.Diff = "" }, false},
		{"no diff and no files", Done, func(r *row) { r.req.Diff, r.req.Files = "", nil }, false},
	}
	// What only the request's diff and files break, the listing's loader
	// takes: it is given neither.
	listingTakes := map[string]bool{"no diff": true, "no diff and no files": true, "1001 files": true,
		"a path that is not UTF-8": true, "a diff above the body cap": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good[tt.from]
			in.req, in.res = request(), result()
			if tt.from != Done {
				in.res = Result{}
			}
			tt.change(&in)
			r, err := UnmarshalRunFromDatabase(in.id, in.repo, in.status, in.req, in.res, in.created, in.st, in.fi)
			// The listing's loader holds the same row, without its diff
			// and files, to the same rules but the diff.
			listed, lerr := UnmarshalListedRunFromDatabase(in.id, in.repo, in.status, in.req.Title, in.req.Description, in.res, in.created, in.st, in.fi)
			switch listedOK := tt.ok || listingTakes[tt.name]; {
			case listedOK && lerr != nil:
				t.Errorf("the listing's loader refused it: %v", lerr)
			case listedOK && (listed.Diff() != "" || len(listed.Files()) != 0 || listed.Title() != in.req.Title ||
				listed.Description() != in.req.Description || listed.Status() != in.status || !listed.StartedAt().Equal(in.st)):
				t.Errorf("the listing's loader gave %+v", *listed)
			case !listedOK && (listed != nil || !errors.Is(lerr, ErrInvalidStoredRun)):
				t.Errorf("the listing's loader took it: %v, %v; want ErrInvalidStoredRun", listed, lerr)
			}
			if !tt.ok {
				if r != nil || !errors.Is(err, ErrInvalidStoredRun) {
					t.Errorf("loaded: %v, %v; want ErrInvalidStoredRun", r, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalRunFromDatabase: %v", err)
			}
			if r.ID() != in.id || r.RepositoryID() != in.repo || r.Status() != in.status || !r.CreatedAt().Equal(in.created) ||
				!r.StartedAt().Equal(in.st) || !r.FinishedAt().Equal(in.fi) || r.Title() != in.req.Title || r.Diff() != in.req.Diff ||
				len(r.Files()) != len(in.req.Files) || r.PromptVersion() != in.res.PromptVersion || r.Summary() != in.res.Summary ||
				len(r.Findings()) != len(in.res.Findings) || !reflect.DeepEqual(r.Stats(), in.res.Stats) {
				t.Errorf("loaded %+v from %+v", *r, in)
			}
		})
	}
}

// TestALoadedRunFollowsTheSameTransitions: a run read back is held to the
// same rules as the one that was built.
func TestALoadedRunFollowsTheSameTransitions(t *testing.T) {
	load := func(status RunStatus, res Result, st, fi time.Time) *Run {
		r, err := UnmarshalRunFromDatabase(runID, repoID, status, request(), res, t0, st, fi)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := load(Done, result(), t1, t2).Fail(t3); !errors.Is(err, ErrRunFinished) {
		t.Errorf("a loaded done run failed: %v", err)
	}
	if err := load(Queued, Result{}, time.Time{}, time.Time{}).Complete(t3, result()); !errors.Is(err, ErrRunNotStarted) {
		t.Errorf("a loaded queued run completed: %v", err)
	}
	r := load(Running, Result{}, t1, time.Time{})
	if err := r.Start(t3); err != nil || !r.StartedAt().Equal(t1) {
		t.Errorf("a loaded running run started again at %v, %v; want its first start %v", r.StartedAt(), err, t1)
	}
}

// TestTakeStoredStart: a running run takes the start the store keeps
// (another attempt's, on another clock, earlier or later than its own),
// and its finish is then judged against it; anything else is refused and
// changes nothing.
func TestTakeStoredStart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		from  string
		at    time.Time
		err   error
		start time.Time
	}{
		{"a later start (the other clock ahead)", "running", t3, nil, t3},
		{"an earlier start", "running", t0.Add(time.Second), nil, t0.Add(time.Second)},
		{"the creation itself", "running", t0, nil, t0},
		{"its own start", "running", t1, nil, t1},

		{"a start before the creation", "running", t0.Add(-time.Nanosecond), ErrInvalidStoredRun, t1},
		{"no start", "running", time.Time{}, ErrInvalidStoredRun, t1},
		{"a queued run", "queued", t1, ErrRunNotStarted, time.Time{}},
		{"a done run", "done", t3, ErrRunFinished, t1},
		{"a failed run", "failed", t3, ErrRunFinished, t1},
		{"a failed run that never ran", "failed-unstarted", t1, ErrRunFinished, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runIn(t, tt.from)
			before := *r
			err := r.TakeStoredStart(tt.at)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("TakeStoredStart(%v) of a %s run = %v, want %v", tt.at, tt.from, err, tt.err)
			}
			if err != nil && !reflect.DeepEqual(*r, before) {
				t.Errorf("the refused start changed the run:\n%+v\nwas %+v", *r, before)
			}
			if !r.StartedAt().Equal(tt.start) {
				t.Errorf("started %v, want %v", r.StartedAt(), tt.start)
			}
		})
	}

	// The attempt's own clock read t1 at its start and reads t2 at its
	// end; the store kept another attempt's start, t3: the finish is not
	// before it, and the run loads as stored.
	r := runIn(t, "running")
	if err := r.TakeStoredStart(t3); err != nil {
		t.Fatal(err)
	}
	if err := r.Complete(t2, result()); err != nil || !r.FinishedAt().Equal(t3) {
		t.Errorf("Complete at %v after the stored start %v: finished %v, %v; want %v", t2, t3, r.FinishedAt(), err, t3)
	}
	if _, err := UnmarshalRunFromDatabase(r.ID(), r.RepositoryID(), r.Status(), r.Request(), r.Result(), r.CreatedAt(), r.StartedAt(), r.FinishedAt()); err != nil {
		t.Errorf("the run does not load: %v", err)
	}
}
