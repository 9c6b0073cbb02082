// Package metrics counts MCP context calls and serves them in the
// Prometheus text format. One counter family does not justify the
// Prometheus client's dependency tree; the exposition format is a few
// lines (https://prometheus.io/docs/instrumenting/exposition_formats/).
package metrics

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
)

// Name is the counter's Prometheus name; its OpenTelemetry name is
// quavon.mcp.context.calls.
const Name = "quavon_mcp_context_calls_total"

// Outcomes are the call statuses of CONTRACT.md, each always exposed.
var Outcomes = []string{"ok", "error", "blocked", "too_large", "unavailable", "budget_exhausted", "invalid_arguments"}

// RetentionName is the counter of rows the retention job deleted, by table.
const RetentionName = "quavon_retention_deleted_rows_total"

// Registry holds the counters. Safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	counts   map[string]uint64
	retained map[string]uint64 // rows deleted by the retention job, by table
}

// New returns a registry with every outcome at zero.
func New() *Registry {
	r := &Registry{counts: map[string]uint64{}, retained: map[string]uint64{}}
	for _, o := range Outcomes {
		r.counts[o] = 0
	}
	return r
}

// McpCall counts one call outcome. An outcome outside the contract's list
// is counted as "error", so a bug cannot create unbounded label values.
func (r *Registry) McpCall(outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.counts[outcome]; !ok {
		outcome = "error"
	}
	r.counts[outcome]++
}

// RetentionDeleted adds the rows one retention run deleted from table
// (a table name of the schema: a bounded label set).
func (r *Registry) RetentionDeleted(table string, rows int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retained[table] += uint64(max(rows, 0))
}

// Count returns the current count of an outcome.
func (r *Registry) Count(outcome string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[outcome]
}

// WriteTo writes the Prometheus text exposition.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	outcomes := make([]string, 0, len(r.counts))
	for o := range r.counts {
		outcomes = append(outcomes, o)
	}
	sort.Strings(outcomes)
	counts := make([]uint64, len(outcomes))
	for i, o := range outcomes {
		counts[i] = r.counts[o]
	}
	retained := maps.Clone(r.retained)
	r.mu.Unlock()
	n, err := fmt.Fprintf(w, "# HELP %s MCP context tool calls by outcome (OpenTelemetry: quavon.mcp.context.calls).\n# TYPE %s counter\n", Name, Name)
	total := int64(n)
	for i, o := range outcomes {
		if err != nil {
			break
		}
		n, err = fmt.Fprintf(w, "%s{outcome=%q} %d\n", Name, o, counts[i])
		total += int64(n)
	}
	if err != nil || len(retained) == 0 {
		return total, err
	}
	n, err = fmt.Fprintf(w, "# HELP %s Rows deleted by the retention job, by table.\n# TYPE %s counter\n", RetentionName, RetentionName)
	total += int64(n)
	for _, table := range slices.Sorted(maps.Keys(retained)) {
		if err != nil {
			break
		}
		n, err = fmt.Fprintf(w, "%s{table=%q} %d\n", RetentionName, table, retained[table])
		total += int64(n)
	}
	return total, err
}

// Handler serves GET /metrics.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = r.WriteTo(w)
	})
}
