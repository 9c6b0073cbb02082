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

// Reviews is an in-memory ports.ReviewRepo.
// When Repos is set, a run needs a repository of the tenant (ErrNotFound).
type Reviews struct {
	Runs  map[string]ports.ReviewRun
	Repos ports.RepositoryRepo
}

// Insert stores r queued, without a result.
func (f *Reviews) Insert(ctx context.Context, r ports.ReviewRun) error {
	if _, used := f.Runs[r.ID]; used {
		return ports.ErrConflict
	}
	if f.Repos != nil {
		if _, err := f.Repos.Get(ctx, r.RepositoryID); err != nil {
			return fmt.Errorf("fake: insert review: repository: %w", err)
		}
	}
	f.Runs[r.ID] = ports.ReviewRun{ID: r.ID, RepositoryID: r.RepositoryID, Status: review.Queued, Title: r.Title,
		Description: r.Description, Diff: r.Diff, Files: r.Files, CreatedAt: r.CreatedAt}
	return nil
}

func (f *Reviews) Get(_ context.Context, id string) (ports.ReviewRun, error) {
	r, ok := f.Runs[id]
	if !ok {
		return r, ports.ErrNotFound
	}
	return r, nil
}

// Recent returns a repository's runs newest first (by CreatedAt, then id
// descending), without their diff and files.
func (f *Reviews) Recent(_ context.Context, repositoryID string, limit int) ([]ports.ReviewRun, error) {
	var out []ports.ReviewRun
	for _, r := range f.Runs {
		if r.RepositoryID == repositoryID {
			r.Diff, r.Files = "", nil
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(x, y ports.ReviewRun) int {
		return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), strings.Compare(y.ID, x.ID))
	})
	return firstN(out, limit), nil
}

func (f *Reviews) Start(_ context.Context, id string, at time.Time) (ports.ReviewRun, error) {
	r, ok := f.Runs[id]
	if !ok {
		return r, ports.ErrNotFound
	}
	if r.Status.Finished() {
		return r, ports.ErrConflict
	}
	if r.StartedAt.IsZero() { // a retry keeps the first start
		r.StartedAt = at
	}
	r.Status = review.Running
	f.Runs[id] = r
	return r, nil
}

// Finish stores the result of a queued or running run; a finished run
// keeps its result (ErrConflict).
func (f *Reviews) Finish(_ context.Context, r ports.ReviewRun) error {
	if r.Status != review.Done && r.Status != review.Failed {
		return fmt.Errorf("fake: finish review: status %q", r.Status)
	}
	run, ok := f.Runs[r.ID]
	switch {
	case !ok:
		return ports.ErrNotFound
	case run.Status == review.Done || run.Status == review.Failed:
		return ports.ErrConflict
	}
	run.Status, run.PromptVersion, run.Findings, run.Summary, run.Stats, run.FinishedAt =
		r.Status, r.PromptVersion, r.Findings, r.Summary, r.Stats, r.FinishedAt
	f.Runs[r.ID] = run
	return nil
}
