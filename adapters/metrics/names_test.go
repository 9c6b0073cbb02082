package metrics

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// exportedFile lists every metric family the registry exports, with its
// type and labels. The Helm chart's tests (deploy/helm, a module of its
// own that cannot import this one) check that every alert and dashboard
// query of the chart names only these metrics and labels.
const exportedFile = "../../deploy/helm/testdata/exported_metrics.txt"

// TestExportedMetricsFile: exportedFile is what the registry of New (with
// the queue collector every worker adds) exports. UPDATE_GOLDEN=1
// rewrites it.
func TestExportedMetricsFile(t *testing.T) {
	got := exportedMetrics(t)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if runtime.GOOS != "linux" {
			t.Fatal("the file lists Linux's process metrics (the image's): regenerate it on Linux")
		}
		if err := os.WriteFile(exportedFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(exportedFile)
	if err != nil {
		t.Fatal(err)
	}
	// The process collector's families differ by OS and the file lists
	// Linux's (the image's): elsewhere every other line is compared.
	if runtime.GOOS != "linux" {
		got, want = withoutProcess(got), []byte(withoutProcess(string(want)))
	}
	if got != string(want) {
		t.Errorf("%s is not what the registry exports; run UPDATE_GOLDEN=1 go test ./adapters/metrics -run TestExportedMetricsFile\ngot:\n%s", exportedFile, got)
	}
}

// withoutProcess is the listing without the process collector's
// families.
func withoutProcess(listing string) string {
	var keep []string
	for _, l := range strings.Split(listing, "\n") {
		if !strings.HasPrefix(l, "process_") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)

// exportedMetrics gathers the registry after one observation of every
// recording method (a vector exports nothing before its first label
// values), and fails when a metric the registry describes was not
// gathered: a new metric must be observed here to reach the file.
func exportedMetrics(t *testing.T) string {
	t.Helper()
	r := New()
	r.ObserveQueue(func(context.Context) (map[string]int64, error) { return map[string]int64{"available": 1}, nil })
	r.McpCall("ok")
	r.McpOperation("tools/call", "", time.Millisecond)
	r.HTTPRequest("GET", "/v1/reviews/{id}", 200, time.Millisecond)
	r.ReviewRun("done", time.Second)
	r.JobLatency("review", time.Second)
	r.RetentionDeleted("audit_events", 1)
	r.McpRecheck("changed")
	r.ObserveAuditOutbox(func(context.Context) (int64, time.Time, error) { return 1, time.Now(), nil })
	r.AuditDelivery("delivered")

	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gathered := map[string]bool{}
	var lines []string
	for _, f := range families {
		gathered[f.GetName()] = true
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, l)
		}
		slices.Sort(names)
		lines = append(lines, strings.TrimSpace(fmt.Sprintf("%s %s %s", f.GetName(), strings.ToLower(f.GetType().String()), strings.Join(names, ","))))
	}
	descs := make(chan *prometheus.Desc)
	go func() { r.reg.Describe(descs); close(descs) }()
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		if !gathered[m[1]] {
			t.Errorf("%s is registered but not gathered: observe it in exportedMetrics", m[1])
		}
	}
	slices.Sort(lines)
	return "# The metric families `codelotse api` and `codelotse worker` export (name,\n" +
		"# type, labels), written by TestExportedMetricsFile in adapters/metrics:\n" +
		"#   UPDATE_GOLDEN=1 go test ./adapters/metrics -run TestExportedMetricsFile\n" +
		strings.Join(lines, "\n") + "\n"
}
