package review

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	uid "github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/limits"
)

// Limits of a review request besides the API's body cap
// (limits.MaxReviewRequestBody), which also bounds the diff and the
// files' contents.
const (
	// MaxTitleChars is the longest title, in characters.
	MaxTitleChars = 500
	// MaxFiles is the most files a request carries.
	MaxFiles = 1000
	// MaxFilePathBytes is the longest file path, in bytes.
	MaxFilePathBytes = 1024
)

// The transitions a run refuses. A refused transition leaves the run as
// it was.
var (
	// ErrRunFinished: a done or failed run never moves again, whatever
	// the transition (a late failure never overwrites a finished review).
	ErrRunFinished = errors.New("review: the run is finished")
	// ErrRunNotStarted: a queued run cannot be done without running.
	ErrRunNotStarted = errors.New("review: the run has not started")
	// ErrPromptVersionRequired: a done run names the prompt version that
	// produced its result.
	ErrPromptVersionRequired = errors.New("review: a done run needs its prompt version")
	// ErrInvalidStoredRun: [UnmarshalRunFromDatabase] refused a row that
	// breaks a run's invariants.
	ErrInvalidStoredRun = errors.New("review: invalid stored run")
)

// Request is what a review is asked to look at: a title, a description,
// the unified diff and the files (path → content) the evidence rule may
// quote.
type Request struct {
	Title       string
	Description string
	Diff        string
	Files       map[string]string
}

// Result is what a done run found: the finder's prompt version, the
// verified findings, the summary and the run's statistics.
type Result struct {
	PromptVersion string
	Findings      []Finding
	Summary       string
	Stats         Stats
}

// Run is one review run, from its request to its result. Its states and
// transitions (a refused one returns its error and changes nothing):
//
//	from \ by  Start                    Complete             Fail
//	queued     running, started = now   ErrRunNotStarted     failed (never started)
//	running    running, first start     done                 failed
//	done       ErrRunFinished           ErrRunFinished       ErrRunFinished
//	failed     ErrRunFinished           ErrRunFinished       ErrRunFinished
//
// A running run starts again when a rescued attempt continues it, and
// keeps its first start; an attempt that read the run queued while
// another started it takes the start the store kept
// ([Run.TakeStoredStart]). Its times keep their order, created ≤ started ≤
// finished: a transition given a time before the run's latest (another
// replica's clock behind) records that latest time instead.
//
// A Run's maps and slices are never changed in place, and the getters
// return copies, so a shallow copy of a Run is a safe copy. The zero Run
// is not a run: use [NewRun] or [UnmarshalRunFromDatabase].
type Run struct {
	id           string
	repositoryID string
	status       RunStatus
	request      Request
	result       Result
	createdAt    time.Time
	startedAt    time.Time
	finishedAt   time.Time
}

// NewRun is a queued run of the repository repositoryID, created now. id
// and repositoryID are UUIDs the caller chose ("id", "repositoryId"); now
// must be set ("createdAt"). The request's rules, each broken one
// reported (the error joins one *[field.Error] per field, named as in the
// API): a title of 1 to [MaxTitleChars] characters ("title"), a diff
// ("diff", at most limits.MaxReviewRequestBody bytes), at most
// [MaxFiles] files whose paths are 1 to [MaxFilePathBytes] bytes of
// UTF-8 and whose contents are at most limits.MaxReviewRequestBody bytes
// together ("files"). No files is an empty map.
func NewRun(id, repositoryID string, req Request, now time.Time) (*Run, error) {
	if err := checkIDs(id, repositoryID); err != nil {
		return nil, err
	}
	if now.IsZero() {
		return nil, &field.Error{Field: "createdAt", Reason: "is required"}
	}
	var errs []error
	if e := checkTitle(req.Title); e != nil {
		errs = append(errs, e)
	}
	switch {
	case req.Diff == "":
		errs = append(errs, &field.Error{Field: "diff", Reason: "is required"})
	case len(req.Diff) > limits.MaxReviewRequestBody:
		errs = append(errs, diffTooLarge())
	}
	if e := checkFiles(req.Files); e != nil {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Run{id: id, repositoryID: repositoryID, status: Queued, request: cloneRequest(req), createdAt: now}, nil
}

func checkIDs(id, repositoryID string) error {
	if !uid.Valid(id) {
		return &field.Error{Field: "id", Reason: "must be a UUID"}
	}
	if !uid.Valid(repositoryID) {
		return &field.Error{Field: "repositoryId", Reason: "must be a UUID"}
	}
	return nil
}

func checkTitle(title string) error {
	if title == "" || utf8.RuneCountInString(title) > MaxTitleChars {
		return &field.Error{Field: "title", Reason: fmt.Sprintf("is required, at most %d characters", MaxTitleChars)}
	}
	return nil
}

func diffTooLarge() error {
	return &field.Error{Field: "diff", Reason: fmt.Sprintf("at most %d bytes", limits.MaxReviewRequestBody)}
}

// checkFiles: a bad path is reported before the count, as the API always
// did.
func checkFiles(files map[string]string) error {
	size := 0
	for path, content := range files {
		if path == "" || len(path) > MaxFilePathBytes || !utf8.ValidString(path) {
			return &field.Error{Field: "files", Reason: fmt.Sprintf("paths must be 1 to %d bytes of UTF-8", MaxFilePathBytes)}
		}
		size += len(content)
	}
	switch {
	case len(files) > MaxFiles:
		return &field.Error{Field: "files", Reason: fmt.Sprintf("at most %d files", MaxFiles)}
	case size > limits.MaxReviewRequestBody:
		return &field.Error{Field: "files", Reason: fmt.Sprintf("at most %d bytes in all", limits.MaxReviewRequestBody)}
	}
	return nil
}

// Start begins an attempt at time now: a queued run becomes running,
// started now; a running run (a rescued attempt continues it) keeps its
// first start. [ErrRunFinished] for a done or failed run.
func (r *Run) Start(now time.Time) error {
	if r.status.Finished() {
		return ErrRunFinished
	}
	if r.status == Queued {
		r.startedAt = latest(now, r.createdAt)
	}
	r.status = Running
	return nil
}

// Complete ends a running run with its result at time now: done.
// [ErrRunNotStarted] for a queued run, [ErrRunFinished] for a done or
// failed one, [ErrPromptVersionRequired] for a result without its prompt
// version.
func (r *Run) Complete(now time.Time, res Result) error {
	switch {
	case r.status.Finished():
		return ErrRunFinished
	case r.status != Running:
		return ErrRunNotStarted
	case res.PromptVersion == "":
		return ErrPromptVersionRequired
	}
	r.status = Done
	r.result = cloneResult(res)
	r.finishedAt = latest(now, r.startedAt)
	return nil
}

// Fail ends a queued or running run without a result at time now (its
// last attempt gave up): failed. [ErrRunFinished] for a done or failed
// run: a late failure never overwrites a finished review.
func (r *Run) Fail(now time.Time) error {
	if r.status.Finished() {
		return ErrRunFinished
	}
	r.status = Failed
	r.finishedAt = latest(now, r.createdAt, r.startedAt)
	return nil
}

// TakeStoredStart makes at the start of a running run: the start the
// store keeps, which is the run's first. The store's is the one that
// counts when another attempt started the run first, after this one read
// it queued (each on its own replica's clock): the run's finish is then
// judged against the start that is stored, so the stored times keep their
// order. [ErrRunNotStarted] for a queued run, [ErrRunFinished] for a done
// or failed one, [ErrInvalidStoredRun] for a zero start or one before the
// run's creation; a refused start changes nothing.
func (r *Run) TakeStoredStart(at time.Time) error {
	if r.status != Running {
		if r.status.Finished() {
			return ErrRunFinished
		}
		return ErrRunNotStarted
	}
	if at.IsZero() || at.Before(r.createdAt) {
		return fmt.Errorf("%w %q: a stored start (%v) before its creation (%v)", ErrInvalidStoredRun, r.id, at, r.createdAt)
	}
	r.startedAt = at
	return nil
}

// latest is the latest of the times.
func latest(t time.Time, others ...time.Time) time.Time {
	for _, o := range others {
		if o.After(t) {
			t = o
		}
	}
	return t
}

// UnmarshalRunFromDatabase rebuilds a stored run, read with its whole
// request, for the store adapters, checking again what makes a run a run,
// so a row that breaks it is [ErrInvalidStoredRun], never a silent value:
// ids that are UUIDs, a status of [RunStatuses], a creation time, the
// times each status has (queued: neither a start nor a finish; running: a
// start, no finish; done: both; failed: a finish, a start when it ran) in
// their order (created ≤ started ≤ finished), a result only on a done run
// (which names its prompt version), and the request as [NewRun] checks
// it: its title, a diff, its files and their sizes. A run read without its
// diff and files (a listing) is [UnmarshalListedRunFromDatabase]'s.
//
// migrations/20261221100000_review_run_times holds review_runs to the same
// times per status and the same order with CHECK constraints
// (adapters/postgres, TestReviewRunChecksAreTheLoaders).
func UnmarshalRunFromDatabase(id, repositoryID string, status RunStatus, req Request, res Result, createdAt, startedAt, finishedAt time.Time) (*Run, error) {
	return unmarshalRun(id, repositoryID, status, req, res, createdAt, startedAt, finishedAt, true)
}

// UnmarshalListedRunFromDatabase rebuilds a stored run that a listing read
// without its diff and files, for the store adapters: every rule of
// [UnmarshalRunFromDatabase] but the diff, which it was not given (the
// signature takes none, so a listing cannot pass one by mistake). The run
// has neither a diff nor files ([Run.Diff] is "", [Run.Files] empty): it
// is for showing, never for running.
func UnmarshalListedRunFromDatabase(id, repositoryID string, status RunStatus, title, description string, res Result, createdAt, startedAt, finishedAt time.Time) (*Run, error) {
	return unmarshalRun(id, repositoryID, status, Request{Title: title, Description: description}, res, createdAt, startedAt, finishedAt, false)
}

// unmarshalRun is both loaders; withDiff says whether the row was read
// with its diff, which is then required.
func unmarshalRun(id, repositoryID string, status RunStatus, req Request, res Result, createdAt, startedAt, finishedAt time.Time, withDiff bool) (*Run, error) {
	invalid := func(err error) (*Run, error) {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidStoredRun, id, err)
	}
	if err := checkIDs(id, repositoryID); err != nil {
		return invalid(err)
	}
	if !status.Valid() {
		return invalid(fmt.Errorf("unknown status %q", status))
	}
	if err := checkTimes(status, createdAt, startedAt, finishedAt); err != nil {
		return invalid(err)
	}
	if status != Done && (res.PromptVersion != "" || res.Summary != "" || len(res.Findings) > 0) {
		return invalid(fmt.Errorf("a %s run has a result", status))
	}
	if status == Done && res.PromptVersion == "" {
		return invalid(ErrPromptVersionRequired)
	}
	if err := checkTitle(req.Title); err != nil {
		return invalid(err)
	}
	switch {
	case withDiff && req.Diff == "":
		return invalid(&field.Error{Field: "diff", Reason: "is required"})
	case len(req.Diff) > limits.MaxReviewRequestBody:
		return invalid(diffTooLarge())
	}
	if err := checkFiles(req.Files); err != nil {
		return invalid(err)
	}
	return &Run{
		id: id, repositoryID: repositoryID, status: status,
		request: cloneRequest(req), result: cloneResult(res),
		createdAt: createdAt, startedAt: startedAt, finishedAt: finishedAt,
	}, nil
}

// checkTimes checks which times a status has, and their order.
func checkTimes(status RunStatus, created, started, finished time.Time) error {
	started0, finished0 := started.IsZero(), finished.IsZero()
	switch {
	case created.IsZero():
		return errors.New("no creation time")
	case status == Queued && (!started0 || !finished0):
		return errors.New("a queued run has a start or a finish")
	case status == Running && (started0 || !finished0):
		return errors.New("a running run needs a start and no finish")
	case status == Done && (started0 || finished0):
		return errors.New("a done run needs a start and a finish")
	case status == Failed && finished0:
		return errors.New("a failed run needs a finish")
	case !started0 && started.Before(created):
		return errors.New("started before it was created")
	case !finished0 && finished.Before(latest(created, started)):
		return errors.New("finished before it was created or started")
	}
	return nil
}

func cloneRequest(req Request) Request {
	files := make(map[string]string, len(req.Files))
	for p, c := range req.Files {
		files[p] = c
	}
	req.Files = files
	return req
}

func cloneResult(res Result) Result {
	res.Findings = append([]Finding{}, res.Findings...)
	res.Stats = cloneStats(res.Stats)
	return res
}

func cloneStats(s Stats) Stats {
	if s.Mcp.Prompt != nil {
		p := *s.Mcp.Prompt
		s.Mcp.Prompt = &p
	}
	if s.Mcp.Servers != nil {
		s.Mcp.Servers = append([]ServerOutcome{}, s.Mcp.Servers...)
	}
	return s
}

// ID is the run's UUID.
func (r *Run) ID() string { return r.id }

// RepositoryID is the UUID of the reviewed repository.
func (r *Run) RepositoryID() string { return r.repositoryID }

// Status is the run's state.
func (r *Run) Status() RunStatus { return r.status }

// Request returns a copy of the run's request.
func (r *Run) Request() Request { return cloneRequest(r.request) }

// Title is the request's title.
func (r *Run) Title() string { return r.request.Title }

// Description is the request's description.
func (r *Run) Description() string { return r.request.Description }

// Diff is the request's diff ("" when the run was read without it).
func (r *Run) Diff() string { return r.request.Diff }

// Files returns a copy of the request's files (empty when the run was
// read without them).
func (r *Run) Files() map[string]string { return cloneRequest(r.request).Files }

// Result returns a copy of the run's result (zero unless done).
func (r *Run) Result() Result { return cloneResult(r.result) }

// PromptVersion is the finder prompt's version of a done run ("" before).
func (r *Run) PromptVersion() string { return r.result.PromptVersion }

// Findings returns a copy of the verified findings of a done run.
func (r *Run) Findings() []Finding { return append([]Finding{}, r.result.Findings...) }

// Summary is a done run's summary.
func (r *Run) Summary() string { return r.result.Summary }

// Stats returns a copy of a done run's statistics.
func (r *Run) Stats() Stats { return cloneStats(r.result.Stats) }

// CreatedAt is when the run was submitted.
func (r *Run) CreatedAt() time.Time { return r.createdAt }

// StartedAt is when its first attempt started; zero before.
func (r *Run) StartedAt() time.Time { return r.startedAt }

// FinishedAt is when it became done or failed; zero before.
func (r *Run) FinishedAt() time.Time { return r.finishedAt }
