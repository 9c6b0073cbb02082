// Package metrics counts MCP context calls and serves them in the
// Prometheus text format. One counter family does not justify the
// Prometheus client's dependency tree; the exposition format is a few
// lines (https://prometheus.io/docs/instrumenting/exposition_formats/).
package metrics

import (
	"fmt"
	"io"
	"net/http"
	rtmetrics "runtime/metrics"
	"sort"
	"sync"
)

// Name is the counter's Prometheus name; its OpenTelemetry name is
// quavon.mcp.context.calls.
const Name = "quavon_mcp_context_calls_total"

// Outcomes are the call statuses of CONTRACT.md, each always exposed.
var Outcomes = []string{"ok", "error", "blocked", "too_large", "unavailable", "budget_exhausted", "invalid_arguments"}

// Registry holds the counters. Safe for concurrent use.
type Registry struct {
	mu     sync.Mutex
	counts map[string]uint64
}

// New returns a registry with every outcome at zero.
func New() *Registry {
	r := &Registry{counts: map[string]uint64{}}
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
	return total, err
}

// runtimeGauges are the process's goroutines and live heap, under the
// Prometheus client's usual names, so that a soak test (docs/BENCHMARKS.md)
// or an operator can see a leak; runtime/metrics reads them without
// stopping the world.
var runtimeGauges = []struct{ name, help, sample string }{
	{"go_goroutines", "Number of goroutines that currently exist.", "/sched/goroutines:goroutines"},
	{"go_gc_heap_live_bytes", "Heap memory marked live by the last garbage collection.", "/gc/heap/live:bytes"},
	{"go_heap_objects_bytes", "Heap memory occupied by objects, live or not yet swept.", "/memory/classes/heap/objects:bytes"},
}

func writeRuntime(w io.Writer) (int, error) {
	samples := make([]rtmetrics.Sample, len(runtimeGauges))
	for i, g := range runtimeGauges {
		samples[i].Name = g.sample
	}
	rtmetrics.Read(samples)
	total := 0
	for i, g := range runtimeGauges {
		var v uint64
		if samples[i].Value.Kind() == rtmetrics.KindUint64 {
			v = samples[i].Value.Uint64()
		}
		n, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", g.name, g.help, g.name, g.name, v)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Handler serves GET /metrics: the registry's counters, then the
// runtime gauges.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if _, err := r.WriteTo(w); err == nil {
			_, _ = writeRuntime(w)
		}
	})
}
