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
	left    map[string]int64
	calls   []string
	nows    []time.Time
	cursors []string
	fail    string
}

// DeleteExpired hands out as cursor the table and the rows deleted so
// far, and records the cursor each batch was given.
func (s *retentionStore) DeleteExpired(_ context.Context, table string, now time.Time, after ports.RetentionCursor, limit int) (int64, ports.RetentionCursor, error) {
	s.calls = append(s.calls, table)
	s.nows = append(s.nows, now)
	s.cursors = append(s.cursors, after.TenantID)
	if table == s.fail {
		return 0, after, errors.New("database down")
	}
	n := min(s.left[table], int64(limit))
	s.left[table] -= n
	if n == 0 {
		return 0, after, nil
	}
	done := 0
	if after.TenantID != "" {
		_, _ = fmt.Sscanf(after.TenantID, table+"/%d", &done)
	}
	return n, ports.RetentionCursor{TenantID: fmt.Sprintf("%s/%d", table, done+int(n))}, nil
}

type retentionCounts map[string]int64

func (m retentionCounts) RetentionDeleted(table string, n int64) { m[table] += n }

func TestRetentionJobDeletesInBatchesTableAfterTable(t *testing.T) {
	store := &retentionStore{left: map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainOutbox: 2, ports.RetainReviews: 11}}
	metrics := retentionCounts{}
	clock := &portfake.Clock{At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	job := operations.NewRetentionJob(store, metrics, clock)
	job.BatchSize = 5
	got, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainOutbox: 2, ports.RetainReviews: 11}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(map[string]int64(metrics)) != fmt.Sprint(want) {
		t.Errorf("deleted %v, metrics %v, want %v", got, metrics, want)
	}
	// A batch that comes back full asks again; a short one ends the table.
	wantCalls := []string{"prompt_logs", "mcp_tool_calls", "mcp_tool_calls", "mcp_tool_calls", "audit_events", "audit_outbox", "review_runs", "review_runs", "review_runs"}
	if !slices.Equal(store.calls, wantCalls) {
		t.Errorf("batches %v, want %v", store.calls, wantCalls)
	}
	// Each batch goes on where the one before it stopped; every table
	// starts at the beginning.
	wantCursors := []string{"", "", "mcp_tool_calls/5", "mcp_tool_calls/10", "", "", "", "review_runs/5", "review_runs/10"}
	if !slices.Equal(store.cursors, wantCursors) {
		t.Errorf("cursors %q, want %q", store.cursors, wantCursors)
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
