package worker_test

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/worker"
)

// countingRecheck counts the recheck's runs and the interval it got.
type countingRecheck struct {
	runs     atomic.Int32
	interval atomic.Int64
}

func (c *countingRecheck) RecheckServers(_ context.Context, interval time.Duration) (map[string]int, error) {
	c.runs.Add(1)
	c.interval.Store(int64(interval))
	return map[string]int{"unchanged": 1}, nil
}

type auditStream struct{}

func (auditStream) Deliver(context.Context) (map[string]int, error) { return nil, nil }

// TestRecheckIsScheduledOnlyWithAnInterval: the recheck is a periodic job
// only when set with a positive interval, every tenth of it (at least
// MinRecheckPeriod, at most the interval).
func TestRecheckIsScheduledOnlyWithAnInterval(t *testing.T) {
	r := &countingRecheck{}
	tests := []struct {
		name string
		opts worker.Options
		want map[string]time.Duration
	}{
		{"off", worker.Options{Recheck: r}, map[string]time.Duration{}},
		{"no job", worker.Options{RecheckInterval: time.Hour}, map[string]time.Duration{}},
		{"an hour", worker.Options{Recheck: r, RecheckInterval: time.Hour}, map[string]time.Duration{worker.RecheckJobKind: 6 * time.Minute}},
		{"a minute", worker.Options{Recheck: r, RecheckInterval: time.Minute}, map[string]time.Duration{worker.RecheckJobKind: 10 * time.Second}},
		{"10 s", worker.Options{Recheck: r, RecheckInterval: 10 * time.Second}, map[string]time.Duration{worker.RecheckJobKind: 10 * time.Second}},
		{"with retention", worker.Options{Recheck: r, RecheckInterval: time.Hour, Retention: &countingRetention{}, RetentionInterval: time.Hour},
			map[string]time.Duration{worker.RecheckJobKind: 6 * time.Minute, worker.RetentionJobKind: time.Hour}},
		{"audit stream", worker.Options{AuditStream: auditStream{}, AuditStreamPeriod: time.Second},
			map[string]time.Duration{worker.AuditStreamJobKind: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.PeriodicJobs(); !maps.Equal(got, tt.want) {
				t.Errorf("periodic jobs %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRecheckRunsOnStart: a worker with the recheck runs it when it
// becomes the leader, with the configured interval.
func TestRecheckRunsOnStart(t *testing.T) {
	e := newEnv(t)
	r := &countingRecheck{}
	start(t, e, newHandler(nil), worker.Options{Recheck: r, RecheckInterval: time.Hour})
	deadline := time.Now().Add(wait)
	for r.runs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the recheck did not run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := time.Duration(r.interval.Load()); got != time.Hour {
		t.Errorf("interval %v, want 1h", got)
	}
}
