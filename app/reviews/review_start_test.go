package reviews_test

import (
	"context"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// racingStarts is the review store of an attempt that read its run queued
// while another attempt, on another replica, started it first: the other
// start is stored just before this attempt's. It keeps the runs the
// attempt gives Finish.
type racingStarts struct {
	*portfake.Reviews
	other    time.Time // the other attempt's start, on its clock
	finished []*review.Run
}

func (s *racingStarts) Start(ctx context.Context, r *review.Run) (time.Time, error) {
	other, err := s.Reviews.Get(ctx, r.ID())
	if err != nil {
		return time.Time{}, err
	}
	if err := other.Start(s.other); err != nil {
		return time.Time{}, err
	}
	if _, err := s.Reviews.Start(ctx, other); err != nil {
		return time.Time{}, err
	}
	return s.Reviews.Start(ctx, r)
}

func (s *racingStarts) Finish(ctx context.Context, r *review.Run) error {
	c := *r
	s.finished = append(s.finished, &c)
	return s.Reviews.Finish(ctx, r)
}

// TestAnAttemptTakesTheStartTheStoreKept: an attempt whose run another
// attempt started first, on a clock ahead or behind its own, finishes the
// run with the stored start, never its own: the run it stores is the one
// the store holds, and the stored times keep their order.
func TestAnAttemptTakesTheStartTheStoreKept(t *testing.T) {
	own := lifecycleT0.Add(2 * time.Minute) // this attempt's clock, at its start and its end
	for _, tt := range []struct {
		name  string
		other time.Time
	}{
		{"the other clock ahead", lifecycleT0.Add(5 * time.Minute)},
		{"the other clock behind", lifecycleT0.Add(time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newReviewEnv(t, 5)
			store := &racingStarts{Reviews: e.reviews, other: tt.other}
			e.tenants.NewTx = func(string) *portfake.Tx {
				return &portfake.Tx{ServerRepo: e.servers, RepositoryRepo: e.repos, PolicyRepo: e.policies, ReviewRepo: store, CallLog: e.calls}
			}
			e.deps.Tenants = e.tenants
			e.deps.Clock = &portfake.Clock{At: own}
			if err := reviews.NewReviewRunner(e.deps).RunReview(context.Background(), revTenant, revReview); err != nil {
				t.Fatalf("RunReview: %v", err)
			}
			if len(store.finished) != 1 {
				t.Fatalf("Finish called %d times, want once", len(store.finished))
			}
			wantFinish := own
			if tt.other.After(own) {
				wantFinish = tt.other
			}
			if got := store.finished[0]; got.Status() != review.Done || !got.StartedAt().Equal(tt.other) || !got.FinishedAt().Equal(wantFinish) {
				t.Errorf("the attempt finished a %s run started %v, finished %v; want done, started %v (the stored start), finished %v",
					got.Status(), got.StartedAt(), got.FinishedAt(), tt.other, wantFinish)
			}
			stored := e.reviews.Runs[revReview]
			if stored.Status() != review.Done || !stored.StartedAt().Equal(tt.other) || !stored.FinishedAt().Equal(wantFinish) {
				t.Errorf("stored: %s, started %v, finished %v; want done, %v, %v", stored.Status(), stored.StartedAt(), stored.FinishedAt(), tt.other, wantFinish)
			}
		})
	}
}

var _ ports.ReviewRepo = (*racingStarts)(nil)
