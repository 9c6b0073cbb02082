package portfake

import (
	"context"
	"slices"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// Calls records tool calls in memory.
type Calls struct{ Records []ports.ToolCall }

func (c *Calls) Record(_ context.Context, call ports.ToolCall) error {
	c.Records = append(c.Records, call)
	return nil
}

// Recent returns a server's records newest first (by CreatedAt), with
// the duration in whole milliseconds as the store keeps it; Records keeps
// them as recorded.
func (c *Calls) Recent(_ context.Context, serverID string, limit int) ([]ports.ToolCall, error) {
	return c.stored(func(r ports.ToolCall) bool { return r.ServerID == serverID }, -1, limit), nil
}

// ForReview returns a run's records oldest first (by CreatedAt).
func (c *Calls) ForReview(_ context.Context, reviewID string, limit int) ([]ports.ToolCall, error) {
	return c.stored(func(r ports.ToolCall) bool { return reviewID != "" && r.ReviewID == reviewID }, 1, limit), nil
}

// stored returns at most limit of the records keep accepts, as the store
// gives them back, sorted by time (order 1 oldest first, -1 newest first;
// PostgreSQL leaves the order of equal times open, the fake keeps the
// order of recording).
func (c *Calls) stored(keep func(ports.ToolCall) bool, order, limit int) []ports.ToolCall {
	var out []ports.ToolCall
	for _, r := range c.Records {
		if keep(r) {
			r.Duration = r.Duration.Truncate(time.Millisecond)
			out = append(out, r)
		}
	}
	if order < 0 { // ties: the last recorded first
		slices.Reverse(out)
	}
	slices.SortStableFunc(out, func(x, y ports.ToolCall) int { return order * x.CreatedAt.Compare(y.CreatedAt) })
	return firstN(out, limit)
}

func (c *Calls) ReviewUsage(_ context.Context, reviewID string) (ports.ReviewUsage, error) {
	var u ports.ReviewUsage
	for _, r := range c.Records {
		if reviewID == "" || r.ReviewID != reviewID {
			continue
		}
		if r.Status != review.CallBudgetExhausted && r.ArgumentsHash != "" {
			u.Reserved++
		}
		switch r.Status {
		case review.CallOK, review.CallError:
			u.Sent++
			u.Bytes += min(r.ResponseBytes, limits.CallReservation)
		case review.CallTooLarge:
			u.Sent++
			u.Bytes += limits.CallReservation
		case review.CallUnavailable:
			u.Sent++
		case review.CallBlocked:
			u.Blocked++
		}
	}
	return u, nil
}
