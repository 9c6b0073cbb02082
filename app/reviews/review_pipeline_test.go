package reviews_test

import (
	"context"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/ports"
)

// slowFinder blocks the finder until its deadline; the other steps answer.
type slowFinder struct{ steps []string }

func (m *slowFinder) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	m.steps = append(m.steps, req.Step)
	if req.Step == ports.StepFinder {
		<-ctx.Done()
		return ports.ModelResponse{}, ctx.Err()
	}
	return ports.ModelResponse{Content: "Nothing verified."}, nil
}

// TestFinderOutOfTimeEndsWithoutFindings: the finder's wall clock ending
// (slow external tools, a slow model) is not a failed review.
func TestFinderOutOfTimeEndsWithoutFindings(t *testing.T) {
	m := &slowFinder{}
	out, err := (&reviews.Pipeline{Model: m, FinderWallClock: 20 * time.Millisecond}).Run(context.Background(),
		reviews.ReviewPipelineInput{Title: "t", Diff: "+x := 1"})
	if err != nil || len(out.Findings) != 0 || out.Summary != "Nothing verified." {
		t.Fatalf("Run = %+v, %v; want no findings and a summary", out, err)
	}
	// A cancelled job, unlike the finder's own clock, is an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&reviews.Pipeline{Model: m}).Run(ctx, reviews.ReviewPipelineInput{Title: "t", Diff: "+x"}); err == nil {
		t.Errorf("Run on a cancelled job = nil error")
	}
}
