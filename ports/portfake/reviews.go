package portfake

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// Reviews is an in-memory ports.ReviewRepo. Its rows are runs as a
// database would hold them: each write builds the stored run again through
// review.UnmarshalRunFromDatabase, as PostgreSQL's rows are read.
// When Repos is set, a run needs a repository of the tenant (ErrNotFound).
type Reviews struct {
	Runs  map[string]*review.Run
	Repos ports.RepositoryRepo
}

// row is a stored run's columns.
type row struct {
	id, repo                   string
	status                     review.RunStatus
	req                        review.Request
	res                        review.Result
	created, started, finished time.Time
	withoutDiffAndFiles        bool
}

func rowOf(r *review.Run) row {
	return row{id: r.ID(), repo: r.RepositoryID(), status: r.Status(), req: r.Request(), res: r.Result(),
		created: r.CreatedAt(), started: r.StartedAt(), finished: r.FinishedAt()}
}

func (w row) load() (*review.Run, error) {
	if w.withoutDiffAndFiles {
		return review.UnmarshalListedRunFromDatabase(w.id, w.repo, w.status, w.req.Title, w.req.Description, w.res, w.created, w.started, w.finished)
	}
	return review.UnmarshalRunFromDatabase(w.id, w.repo, w.status, w.req, w.res, w.created, w.started, w.finished)
}

// Insert stores r's request queued, without a result.
func (f *Reviews) Insert(ctx context.Context, r *review.Run) error {
	if _, used := f.Runs[r.ID()]; used {
		return ports.ErrConflict
	}
	if f.Repos != nil {
		if _, err := f.Repos.Get(ctx, r.RepositoryID()); err != nil {
			return fmt.Errorf("fake: insert review: repository: %w", err)
		}
	}
	w := rowOf(r)
	w.status, w.res, w.started, w.finished = review.Queued, review.Result{}, time.Time{}, time.Time{}
	return f.store(w)
}

func (f *Reviews) store(w row) error {
	run, err := w.load()
	if err != nil {
		return fmt.Errorf("fake: store review: %w", err)
	}
	f.Runs[w.id] = run
	return nil
}

func (f *Reviews) Get(_ context.Context, id string) (*review.Run, error) {
	r, ok := f.Runs[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	c := *r
	return &c, nil
}

// Recent returns a repository's runs newest first (by CreatedAt, then id
// descending), without their diff and files.
func (f *Reviews) Recent(_ context.Context, repositoryID string, limit int) ([]*review.Run, error) {
	out := []*review.Run{}
	for _, r := range f.Runs {
		if r.RepositoryID() == repositoryID {
			w := rowOf(r)
			w.withoutDiffAndFiles = true
			listed, err := w.load()
			if err != nil {
				return nil, err
			}
			out = append(out, listed)
		}
	}
	slices.SortFunc(out, func(x, y *review.Run) int {
		return cmp.Or(y.CreatedAt().Compare(x.CreatedAt()), strings.Compare(y.ID(), x.ID()))
	})
	return firstN(out, limit), nil
}

// Start stores r's start over a queued or running run, never before the
// run's creation; a retry keeps the first start, and so does an attempt
// that read the run queued while another started it. It returns the
// start the row keeps.
func (f *Reviews) Start(_ context.Context, r *review.Run) (time.Time, error) {
	if r.Status() != review.Running {
		return time.Time{}, fmt.Errorf("fake: start review: status %q", r.Status())
	}
	w, err := f.unfinished(r.ID())
	if err != nil {
		return time.Time{}, err
	}
	w.status = review.Running
	if w.started.IsZero() {
		w.started = latest(r.StartedAt(), w.created)
	}
	if err := f.store(w); err != nil {
		return time.Time{}, err
	}
	return w.started, nil
}

// Finish stores r's end over a row r's transition may leave: a done run
// over a running one, a failed run over a queued or running one; a
// finished run keeps its result (ErrConflict), and so does a queued run
// under a done one. The finish is r's, or the row's creation or start
// when that is later (r may hold a start of its own), as PostgreSQL's
// greatest().
func (f *Reviews) Finish(_ context.Context, r *review.Run) error {
	if !r.Status().Finished() {
		return fmt.Errorf("fake: finish review: status %q", r.Status())
	}
	w, err := f.unfinished(r.ID())
	if err != nil {
		return err
	}
	if r.Status() == review.Done && w.status != review.Running {
		return fmt.Errorf("fake: finish review: a done run over a %s one: %w", w.status, ports.ErrConflict)
	}
	if w.started.IsZero() {
		w.started = r.StartedAt()
	}
	w.status, w.res = r.Status(), r.Result()
	w.finished = latest(r.FinishedAt(), w.created, w.started)
	return f.store(w)
}

// latest is the latest of the times (an absent, zero, time is the
// earliest).
func latest(t time.Time, others ...time.Time) time.Time {
	for _, o := range others {
		if o.After(t) {
			t = o
		}
	}
	return t
}

// unfinished is the stored row of a queued or running run, the only
// ones Start and Finish move (the guard PostgreSQL's UPDATE holds).
func (f *Reviews) unfinished(id string) (row, error) {
	stored, ok := f.Runs[id]
	switch {
	case !ok:
		return row{}, ports.ErrNotFound
	case stored.Status().Finished():
		return row{}, ports.ErrConflict
	}
	return rowOf(stored), nil
}
