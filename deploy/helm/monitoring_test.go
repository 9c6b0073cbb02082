package helm_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The monitoring files of the chart: the alerts as a plain Prometheus rule
// file (templates/prometheusrule.yaml wraps it), the Grafana dashboard
// (templates/grafana-dashboard.yaml), the promtool unit tests of the
// alerts, the metrics the service exports (written by the main module's
// adapters/metrics TestExportedMetricsFile) and the runbook.
const (
	alertsFile          = chartDir + "/files/alerts.yaml"
	dashboardFile       = chartDir + "/files/dashboard.json"
	dashboardKey        = "codelotse.json"
	alertsTestFile      = "testdata/alerts_test.yaml"
	exportedMetricsFile = "testdata/exported_metrics.txt"
	runbookDoc          = "../../docs/runbook.md"
)

// targetLabels are the labels Prometheus (job, instance) and the chart's
// ServiceMonitor (namespace, service, pod, container, endpoint, and
// component from its relabeling) give every series of a target.
var targetLabels = []string{"job", "instance", "namespace", "service", "pod", "container", "endpoint", "component"}

// prometheusSeries are the series Prometheus itself writes for every
// target, the only names a query may use that the service does not export.
var prometheusSeries = map[string]string{"up": "1 when the target's last scrape succeeded, else 0"}

func TestMonitoringOffByDefault(t *testing.T) {
	for _, files := range [][]string{nil, {airgapValues}} {
		objs := mustRender(t, files)
		if n, m := count(objs, "PrometheusRule"), count(objs, "ConfigMap"); n != 0 || m != 0 {
			t.Errorf("-f %v: %d PrometheusRule and %d ConfigMap by default, want none (they need prometheus-operator and Grafana's sidecar)", files, n, m)
		}
	}
	// The values are the top-level prometheusRule and dashboard; the strict
	// schema refuses the old places under metrics.
	for _, set := range []string{"metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true", "metrics.dashboard.enabled=true"} {
		if _, err := render(nil, set); err == nil {
			t.Errorf("--set %s renders; want the schema to refuse it (prometheusRule.* and dashboard.* are top-level)", set)
		}
	}
}

// TestPrometheusRule: prometheusRule.enabled renders the groups of
// files/alerts.yaml unchanged but for the runbook's base address, in both
// profiles.
func TestPrometheusRule(t *testing.T) {
	want := alertGroups(t)
	for _, files := range [][]string{nil, {airgapValues}} {
		rule := prometheusRule(t, files, "prometheusRule.enabled=true", "prometheusRule.labels.release=kube-prometheus-stack")
		if rule.Labels["release"] != "kube-prometheus-stack" || rule.Labels["app.kubernetes.io/name"] != "codelotse" {
			t.Errorf("-f %v: PrometheusRule labels %v, want the chart's and prometheusRule.labels", files, rule.Labels)
		}
		if !reflect.DeepEqual(rule.Spec, want) {
			t.Errorf("-f %v: the PrometheusRule's groups differ from %s:\n%s", files, alertsFile, mustJSON(t, rule.Spec))
		}
	}
	base := "https://wiki.example.com/ops/codelotse-runbook"
	rule := prometheusRule(t, nil, "prometheusRule.enabled=true", "prometheusRule.runbookBaseURL="+base)
	moved := 0
	for gi, g := range rule.Spec.Groups {
		for ri, r := range g.Rules {
			if got, wantURL := r.Annotations["runbook_url"], base+"#"+strings.ToLower(r.Alert); got != wantURL {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, wantURL)
			}
			r.Annotations["runbook_url"] = want.Groups[gi].Rules[ri].Annotations["runbook_url"]
			moved++
		}
	}
	if !reflect.DeepEqual(rule.Spec, want) || moved == 0 {
		t.Errorf("runbookBaseURL changed more than the runbook_url of %d rules", moved)
	}
	if _, err := render(nil, "prometheusRule.enabled=true", "prometheusRule.runbookBaseURL=https://x/runbook.md#top"); err == nil ||
		!strings.Contains(err.Error(), "runbookBaseURL") {
		t.Errorf("a runbookBaseURL with an anchor renders: %v", err)
	}
}

// TestAlertsFollowTheConvention: every rule is an alert with a for, a
// severity of critical or warning, a summary, a description and a
// runbook_url naming its own section of docs/runbook.md; every alert
// section of the runbook is an alert.
func TestAlertsFollowTheConvention(t *testing.T) {
	base := defaultRunbookBase(t)
	sections := runbookSections(t)
	alerts := map[string]bool{}
	for _, r := range alertRules(t) {
		if r.Alert == "" {
			t.Errorf("a rule without an alert name (record %q): the file holds alerts only", r.Record)
			continue
		}
		if alerts[r.Alert] {
			t.Errorf("%s: two alerts of this name", r.Alert)
		}
		alerts[r.Alert] = true
		if r.For == nil || *r.For == "" {
			t.Errorf("%s: no for", r.Alert)
		}
		if s := r.Labels["severity"]; s != "critical" && s != "warning" || len(r.Labels) != 1 {
			t.Errorf("%s: labels %v, want only severity critical or warning", r.Alert, r.Labels)
		}
		var keys []string
		for k, v := range r.Annotations {
			keys = append(keys, k)
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: empty annotation %s", r.Alert, k)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"description", "runbook_url", "summary"}) {
			t.Errorf("%s: annotations %v, want description, runbook_url and summary", r.Alert, keys)
		}
		anchor := strings.ToLower(r.Alert)
		if got := r.Annotations["runbook_url"]; got != base+"#"+anchor {
			t.Errorf("%s: runbook_url %q, want %q (values.yaml's runbookBaseURL and the alert's section)", r.Alert, got, base+"#"+anchor)
		}
		if !sections[anchor] {
			t.Errorf("%s: %s has no section ## %s", r.Alert, runbookDoc, r.Alert)
		}
	}
	for anchor := range sections {
		if strings.HasPrefix(anchor, "codelotse") && !alerts[sectionAlert(t, anchor)] {
			t.Errorf("%s: section #%s names no alert of %s", runbookDoc, anchor, alertsFile)
		}
	}
	if len(alerts) == 0 {
		t.Fatalf("%s holds no alerts", alertsFile)
	}
}

// TestGrafanaDashboard: dashboard.enabled renders
// files/dashboard.json in a ConfigMap labelled for Grafana's sidecar; the
// label, the namespace and the annotations come from the values.
func TestGrafanaDashboard(t *testing.T) {
	want := dashboardJSON(t)
	for _, files := range [][]string{nil, {airgapValues}} {
		cm := dashboardConfigMap(t, files, "dashboard.enabled=true")
		if cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != "" || len(cm.Annotations) != 0 {
			t.Errorf("-f %v: ConfigMap labels %v, namespace %q, annotations %v; want grafana_dashboard: \"1\" in the release's namespace", files, cm.Labels, cm.Namespace, cm.Annotations)
		}
		if cm.Data[dashboardKey] != want {
			t.Errorf("-f %v: the ConfigMap's %s is not %s", files, dashboardKey, dashboardFile)
		}
	}
	cm := dashboardConfigMap(t, nil, "dashboard.enabled=true", "dashboard.labelKey=grafana.example.com/dashboard",
		"dashboard.labelValue=codelotse", "dashboard.namespace=monitoring",
		"dashboard.annotations.grafana_folder=CodeLotse")
	if cm.Labels["grafana.example.com/dashboard"] != "codelotse" || cm.Labels["grafana_dashboard"] != "" || cm.Namespace != "monitoring" ||
		cm.Annotations["grafana_folder"] != "CodeLotse" {
		t.Errorf("ConfigMap labels %v, namespace %q, annotations %v; want the values' label, namespace and folder", cm.Labels, cm.Namespace, cm.Annotations)
	}
	for _, set := range []string{"dashboard.labelKey=", "dashboard.labelKey=a b", "dashboard.labelValue=-x"} {
		if _, err := render(nil, "dashboard.enabled=true", set); err == nil {
			t.Errorf("--set %s renders; want the schema to refuse a label Kubernetes refuses", set)
		}
	}
	var d dashboard
	if err := json.Unmarshal([]byte(want), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: uid %q, title %q", dashboardFile, d.UID, d.Title)
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: panel %q: %d queries, data source %q; want queries on ${datasource}", dashboardFile, p.Title, len(p.Targets), p.Datasource.UID)
		}
	}
}

// TestQueriesNameExportedMetrics: every alert expression and every query of
// the dashboard selects only metrics the service exports (a histogram's
// _bucket, _sum and _count included; plus Prometheus's own up), always with
// job="codelotse", and names only labels those series have. Every metric
// family of the service's own (not the Go runtime's or the process's) has a
// panel.
func TestQueriesNameExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	used := map[string]bool{}
	check := func(where, expr string) {
		t.Helper()
		for _, problem := range checkQuery(expr, exported, used) {
			t.Errorf("%s: %s", where, problem)
		}
	}
	for _, r := range alertRules(t) {
		check(alertsFile+": "+r.Alert, r.Expr.String())
	}
	var d dashboard
	if err := json.Unmarshal([]byte(dashboardJSON(t)), &d); err != nil {
		t.Fatal(err)
	}
	usedByAlerts := maps.Clone(used)
	clear(used)
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			check(fmt.Sprintf("%s: panel %q %s", dashboardFile, p.Title, q.RefID), grafanaQuery(q.Expr))
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("%s: variable %s: %v", dashboardFile, v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("%s: variable %s: query %q is not label_values(SELECTOR, LABEL)", dashboardFile, v.Name, q.Query)
			continue
		}
		check(dashboardFile+": variable "+v.Name, m[1])
		if !slices.Contains(targetLabels, m[2]) {
			t.Errorf("%s: variable %s: label %q is not a target label", dashboardFile, v.Name, m[2])
		}
	}
	for name := range exported {
		if own := !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_"); own && !used[name] {
			t.Errorf("%s: no panel shows %s", dashboardFile, name)
		}
	}
	if len(usedByAlerts) == 0 || len(used) == 0 {
		t.Errorf("metrics seen: %d in the alerts, %d in the dashboard", len(usedByAlerts), len(used))
	}
}

// TestQueryCheckRefuses: the check of TestQueriesNameExportedMetrics fails
// on a metric or label the service does not export and on a selector
// without job="codelotse".
func TestQueryCheckRefuses(t *testing.T) {
	exported := exportedMetrics(t)
	for _, tt := range []struct{ expr, want string }{
		{`rate(quavon_mcp_context_calls{job="codelotse"}[5m])`, "quavon_mcp_context_calls is not a metric the service exports"},
		{`quavon_queue_jobs_bucket{job="codelotse"}`, "quavon_queue_jobs_bucket is not a metric the service exports"},
		{`quavon_queue_jobs{job="codelotse", status="available"}`, `label "status"`},
		{`sum by (route) (rate(http_server_request_duration_seconds_count{job="codelotse"}[5m]))`, `label "route"`},
		{`quavon_queue_jobs{state="available"}`, `without job="codelotse"`},
		{`up{job=~"codelotse.*"}`, `without job="codelotse"`},
		{`rate(quavon_mcp_context_calls_total{job="codelotse"}[5m]`, "parse"},
		{`{__name__=~"quavon_.*", job="codelotse"}`, "no metric name"},
	} {
		problems := checkQuery(tt.expr, exported, map[string]bool{})
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
			t.Errorf("%s: problems %q, want one containing %q", tt.expr, problems, tt.want)
		}
	}
	ok := `histogram_quantile(0.95, sum by (le, namespace) (rate(quavon_queue_job_latency_seconds_bucket{job="codelotse", kind="review"}[5m]))) / on (namespace) group_left max by (namespace) (up{job="codelotse"})`
	if problems := checkQuery(ok, exported, map[string]bool{}); len(problems) > 0 {
		t.Errorf("%s: %q", ok, problems)
	}
}

// TestPromtool runs promtool's check and unit tests of the alerts
// (PROMTOOL when set, else promtool on PATH; missing fails), and checks
// that the unit tests see each alert fire and not fire.
func TestPromtool(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		var err error
		if promtool, err = exec.LookPath("promtool"); err != nil {
			t.Fatalf("promtool not found (it checks and tests the chart's alerts): install Debian's prometheus package (apt-get install prometheus; .ci/testdeps promtool does it as root), put Prometheus's promtool on PATH or set PROMTOOL: %v", err)
		}
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertsTestFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	raw, err := os.ReadFile(alertsTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			Name       string `json:"name"`
			AlertTests []struct {
				Alertname string            `json:"alertname"`
				ExpAlerts []json.RawMessage `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatalf("%s: %v", alertsTestFile, err)
	}
	if !slices.Equal(tests.RuleFiles, []string{"../codelotse/files/alerts.yaml"}) {
		t.Errorf("%s: rule_files %v, want the chart's %s only", alertsTestFile, tests.RuleFiles, alertsFile)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertTests {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				silent[at.Alertname] = true
			}
		}
	}
	for _, r := range alertRules(t) {
		if !fires[r.Alert] || !silent[r.Alert] {
			t.Errorf("%s: %s tests it firing: %v, not firing: %v; want both", r.Alert, alertsTestFile, fires[r.Alert], silent[r.Alert])
		}
	}
}

// checkQuery returns what is wrong with one PromQL query and adds the
// metric families it selects to used.
func checkQuery(expr string, exported map[string]metric, used map[string]bool) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return []string{fmt.Sprintf("parse %q: %v", expr, err)}
	}
	var problems []string
	seen := slices.Clone(targetLabels)
	var grouping []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			name := n.Name
			if name == "" {
				problems = append(problems, fmt.Sprintf("selector %s has no metric name", n))
				return nil
			}
			family, labels, ok := resolve(name, exported)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s is not a metric the service exports (%s)", name, exportedMetricsFile))
				return nil
			}
			used[family] = true
			seen = append(seen, labels...)
			if !hasJob(n.LabelMatchers) {
				problems = append(problems, fmt.Sprintf("%s selected without job=\"codelotse\": other services export series of this name", n))
			}
			for _, m := range n.LabelMatchers {
				if m.Name != "__name__" && !slices.Contains(labels, m.Name) && !slices.Contains(targetLabels, m.Name) {
					problems = append(problems, fmt.Sprintf("%s: label %q is neither one of %s's (%v) nor a target label", n, m.Name, family, labels))
				}
			}
		case *parser.AggregateExpr:
			grouping = append(grouping, n.Grouping...)
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				grouping = append(grouping, n.VectorMatching.MatchingLabels...)
				grouping = append(grouping, n.VectorMatching.Include...)
			}
		}
		return nil
	})
	for _, l := range grouping {
		if !slices.Contains(seen, l) {
			problems = append(problems, fmt.Sprintf("label %q of a by, on or group clause is on none of the series selected", l))
		}
	}
	return problems
}

func hasJob(ms []*labels.Matcher) bool {
	for _, m := range ms {
		if m.Name == "job" && m.Type == labels.MatchEqual && m.Value == "codelotse" {
			return true
		}
	}
	return false
}

// resolve finds the family of a selected name and the labels its series
// carry: the name itself, a histogram's _bucket (with le), _sum or _count,
// a summary's _sum or _count, or a series of Prometheus's own.
func resolve(name string, exported map[string]metric) (family string, labels []string, ok bool) {
	if m, ok := exported[name]; ok {
		if m.typ == "summary" {
			return name, append(slices.Clone(m.labels), "quantile"), true
		}
		if m.typ != "histogram" {
			return name, m.labels, true
		}
	}
	if _, ok := prometheusSeries[name]; ok {
		return name, nil, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		m, ok := exported[base]
		if !found || !ok || (m.typ != "histogram" && (m.typ != "summary" || suffix == "_bucket")) {
			continue
		}
		if suffix == "_bucket" {
			return base, append(slices.Clone(m.labels), "le"), true
		}
		return base, m.labels, true
	}
	return "", nil, false
}

type metric struct {
	typ    string
	labels []string
}

// exportedMetrics reads exportedMetricsFile: "NAME TYPE [LABEL,...]" lines.
func exportedMetrics(t *testing.T) map[string]metric {
	t.Helper()
	f, err := os.Open(exportedMetricsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]metric{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || len(fields) > 3 {
			t.Fatalf("%s: %q is not NAME TYPE [LABELS]", exportedMetricsFile, line)
		}
		m := metric{typ: fields[1]}
		if len(fields) == 3 {
			m.labels = strings.Split(fields[2], ",")
		}
		out[fields[0]] = m
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"quavon_mcp_context_calls_total", "http_server_request_duration_seconds", "process_start_time_seconds"} {
		if _, ok := out[name]; !ok {
			t.Fatalf("%s lacks %s", exportedMetricsFile, name)
		}
	}
	return out
}

var (
	labelValues  = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	grafanaRange = regexp.MustCompile(`\[\$(__rate_interval|__interval|__range)\]`)
	grafanaVar   = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)
)

// grafanaQuery makes PromQL of a dashboard query: Grafana's range
// variables become durations, the other variables a label value.
func grafanaQuery(q string) string {
	return grafanaVar.ReplaceAllString(grafanaRange.ReplaceAllString(q, "[5m]"), "x")
}

type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"` // a string for a data source variable
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// alertGroups reads files/alerts.yaml strictly into the PrometheusRule's
// spec: a key the operator's API does not know fails here.
func alertGroups(t *testing.T) monitoringv1.PrometheusRuleSpec {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var spec monitoringv1.PrometheusRuleSpec
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	return spec
}

func alertRules(t *testing.T) []monitoringv1.Rule {
	t.Helper()
	var rules []monitoringv1.Rule
	for _, g := range alertGroups(t).Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

func prometheusRule(t *testing.T, files []string, set ...string) *monitoringv1.PrometheusRule {
	t.Helper()
	var found []*monitoringv1.PrometheusRule
	for _, o := range mustRender(t, files, set...) {
		if r, ok := o.obj.(*monitoringv1.PrometheusRule); ok {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("-f %v --set %v: %d PrometheusRules, want 1", files, set, len(found))
	}
	return found[0]
}

func dashboardConfigMap(t *testing.T, files []string, set ...string) *corev1.ConfigMap {
	t.Helper()
	var found []*corev1.ConfigMap
	for _, o := range mustRender(t, files, set...) {
		if cm, ok := o.obj.(*corev1.ConfigMap); ok {
			found = append(found, cm)
		}
	}
	if len(found) != 1 || found[0].Name != "codelotse-dashboard" {
		t.Fatalf("-f %v --set %v: %d ConfigMaps, want codelotse-dashboard", files, set, len(found))
	}
	return found[0]
}

// dashboardJSON is files/dashboard.json as the ConfigMap holds it (a YAML
// block scalar without its final newline).
func dashboardJSON(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(string(raw), "\n")
}

func defaultRunbookBase(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		PrometheusRule struct {
			RunbookBaseURL string `json:"runbookBaseURL"`
		} `json:"prometheusRule"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil || v.PrometheusRule.RunbookBaseURL == "" {
		t.Fatalf("values.yaml: prometheusRule.runbookBaseURL: %v", err)
	}
	return v.PrometheusRule.RunbookBaseURL
}

var heading = regexp.MustCompile(`(?m)^## (.+)$`)

// runbookSections are the anchors of the runbook's sections as GitHub
// makes them: lower case, spaces to hyphens, other punctuation dropped.
func runbookSections(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(runbookDoc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(raw), -1) {
		out[anchor(m[1])] = true
	}
	return out
}

func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sectionAlert is the alert a runbook anchor belongs to, by its lower case.
func sectionAlert(t *testing.T, a string) string {
	t.Helper()
	for _, r := range alertRules(t) {
		if strings.ToLower(r.Alert) == a {
			return r.Alert
		}
	}
	return ""
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
