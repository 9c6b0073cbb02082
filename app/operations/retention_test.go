package operations_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// retentionStore deletes from fake tables of n expired rows each.
type retentionStore struct {
	left  map[string]int64
	calls []string
	nows  []time.Time
	fail  string
}

func (s *retentionStore) DeleteExpired(_ context.Context, table string, now time.Time, limit int) (int64, error) {
	s.calls = append(s.calls, table)
	s.nows = append(s.nows, now)
	if table == s.fail {
		return 0, errors.New("database down")
	}
	n := min(s.left[table], int64(limit))
	s.left[table] -= n
	return n, nil
}

type retentionCounts map[string]int64

func (m retentionCounts) RetentionDeleted(table string, n int64) { m[table] += n }

func TestRetentionJobDeletesInBatchesTableAfterTable(t *testing.T) {
	store := &retentionStore{left: map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainReviews: 11}}
	metrics := retentionCounts{}
	clock := &portfake.Clock{At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	job := operations.NewRetentionJob(store, metrics, clock)
	job.BatchSize = 5
	got, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainReviews: 11}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(map[string]int64(metrics)) != fmt.Sprint(want) {
		t.Errorf("deleted %v, metrics %v, want %v", got, metrics, want)
	}
	// A batch that comes back full asks again; a short one ends the table.
	wantCalls := []string{"prompt_logs", "mcp_tool_calls", "mcp_tool_calls", "mcp_tool_calls", "audit_events", "review_runs", "review_runs", "review_runs"}
	if !slices.Equal(store.calls, wantCalls) {
		t.Errorf("batches %v, want %v", store.calls, wantCalls)
	}
	for _, now := range store.nows {
		if !now.Equal(clock.At) {
			t.Errorf("a batch judged by %v, want the run's %v", now, clock.At)
		}
	}

	store = &retentionStore{left: map[string]int64{ports.RetainPromptLogs: 2}, fail: ports.RetainToolCalls}
	metrics = retentionCounts{}
	got, err = operations.NewRetentionJob(store, metrics, clock).Run(context.Background())
	if err == nil || got[ports.RetainPromptLogs] != 2 || metrics[ports.RetainPromptLogs] != 2 || slices.Contains(store.calls, ports.RetainReviews) {
		t.Errorf("failing store: %v, %v, metrics %v, calls %v", got, err, metrics, store.calls)
	}
}
