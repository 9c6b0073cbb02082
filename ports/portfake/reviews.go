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
		w.req.Diff, w.req.Files = "", nil
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

// Start stores r's start over a queued or running run; a retry keeps the
// first start.
func (f *Reviews) Start(_ context.Context, r *review.Run) error {
	if r.Status() != review.Running {
		return fmt.Errorf("fake: start review: status %q", r.Status())
	}
	w, err := f.unfinished(r.ID())
	if err != nil {
		return err
	}
	w.status = review.Running
	if w.started.IsZero() {
		w.started = r.StartedAt()
	}
	return f.store(w)
}

// Finish stores r's end over a queued or running run; a finished run
// keeps its result (ErrConflict).
func (f *Reviews) Finish(_ context.Context, r *review.Run) error {
	if !r.Status().Finished() {
		return fmt.Errorf("fake: finish review: status %q", r.Status())
	}
	w, err := f.unfinished(r.ID())
	if err != nil {
		return err
	}
	w.status, w.res, w.finished = r.Status(), r.Result(), r.FinishedAt()
	if w.started.IsZero() {
		w.started = r.StartedAt()
	}
	return f.store(w)
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
