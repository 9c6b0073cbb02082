package helm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir     = "codelotse"
	airgapValues = "codelotse/values-airgap.yaml"
)

// required are the values every install must give (docs/operations.md, "Secrets and install").
var required = []string{"database.existingSecret=codelotse-db", "encryption.existingSecret=codelotse-keys", "llm.existingSecret=codelotse-llm"}

// object is one rendered manifest decoded into its typed API struct.
type object struct {
	source string
	kind   string
	name   string
	obj    any
	hook   *release.Hook // nil for a release resource
}

// render renders the chart as `helm install codelotse codelotse -f FILES --set SET`
// would, and decodes every manifest strictly.
func render(files []string, set ...string) ([]object, error) {
	return renderExactly(files, append(slices.Clone(required), set...))
}

// renderExactly renders with the given values only.
func renderExactly(files, set []string) ([]object, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	opts := values.Options{ValueFiles: files, Values: set}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "codelotse", Namespace: "review", IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	for name := range out {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(out, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(out, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var objs []object
	for _, m := range manifests {
		o, err := decode(m.Name, m.Content)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	for _, h := range hooks {
		o, err := decode(h.Path, h.Manifest)
		if err != nil {
			return nil, err
		}
		o.hook = h
		objs = append(objs, o)
	}
	return objs, nil
}

// decode refuses duplicate keys, unknown kinds and unknown fields: what
// the API server would reject (or silently drop) fails here.
func decode(source, manifest string) (object, error) {
	js, err := yaml.YAMLToJSONStrict([]byte(manifest))
	if err != nil {
		return object{}, fmt.Errorf("%s: %w", source, err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return object{}, fmt.Errorf("%s: %w", source, err)
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &monitoringv1.ServiceMonitor{}
	case "monitoring.coreos.com/v1 PrometheusRule":
		obj = &monitoringv1.PrometheusRule{}
	default:
		return object{}, fmt.Errorf("%s: no typed struct for %q %q", source, tm.APIVersion, tm.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return object{}, fmt.Errorf("%s: %s: %w", source, tm.Kind, err)
	}
	name := obj.(metav1.Object).GetName()
	if name == "" {
		return object{}, fmt.Errorf("%s: %s without a name", source, tm.Kind)
	}
	return object{source: source, kind: tm.Kind, name: name, obj: obj}, nil
}

func mustRender(t *testing.T, files []string, set ...string) []object {
	t.Helper()
	objs, err := render(files, set...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return objs
}

func TestDefaultProfile(t *testing.T) {
	objs := mustRender(t, nil)
	expectKinds(t, objs, map[string]int{"Deployment": 2, "Job": 1, "Service": 2, "ServiceAccount": 1,
		"PodDisruptionBudget": 2, "NetworkPolicy": 2})
	for _, c := range standardChecks {
		t.Run(c.name, func(t *testing.T) {
			if problems := c.check(objs, profile{}); len(problems) > 0 {
				t.Errorf("%s", strings.Join(problems, "\n"))
			}
		})
	}
	// The standard profile's default egress includes https anywhere for MCP
	// servers and the model, so the air-gap egress check must reject it:
	// proof that the check looks at what the default renders.
	if problems := checkAirgapEgress(objs, airgapProfile); len(problems) == 0 {
		t.Error("the default profile passes the air-gap egress check; the check sees nothing")
	}
	// No proxy is trusted by default: X-Forwarded-For is ignored until
	// the operator names the ingress's networks.
	for _, p := range pods(objs) {
		for _, c := range p.spec.Containers {
			if got := envValue(c, "QUAVON_TRUSTED_PROXIES"); got != "" {
				t.Errorf("%s/%s: QUAVON_TRUSTED_PROXIES = %q by default, want empty", p.name, c.Name, got)
			}
		}
	}
	// No allowlist of MCP server URLs, no cap of the calls per minute, no
	// recheck interval, no audit webhook by default: the service's
	// defaults, and no egress to a sink.
	expectUnset(t, objs)
}

func TestAirgapProfile(t *testing.T) {
	objs := mustRender(t, []string{airgapValues})
	expectKinds(t, objs, map[string]int{"Deployment": 2, "Job": 1, "Service": 2, "ServiceAccount": 1,
		"PodDisruptionBudget": 2, "NetworkPolicy": 2})
	for _, c := range append(slices.Clone(standardChecks), airgapChecks...) {
		t.Run(c.name, func(t *testing.T) {
			if problems := c.check(objs, airgapProfile); len(problems) > 0 {
				t.Errorf("%s", strings.Join(problems, "\n"))
			}
		})
	}
	// The air-gap profile streams no audit events: no
	// QUAVON_AUDIT_WEBHOOK_URL (nor its secret) unless the operator adds
	// a webhook, and none of the other optional variables.
	expectUnset(t, objs)
}

// unsetByDefault are the variables the chart renders only when their value
// is set: unset, the service's default applies.
var unsetByDefault = []string{"QUAVON_MCP_ALLOWED_URLS", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", "QUAVON_MCP_RECHECK_INTERVAL",
	"QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_OAUTH_SIGNING_KEYS"}

// expectUnset: no container names a variable of unsetByDefault, not even
// empty, so an unset value renders what the chart rendered before the
// value existed.
func expectUnset(t *testing.T, objs []object) {
	t.Helper()
	n := 0
	for _, p := range pods(objs) {
		for _, c := range containers(p) {
			n++
			for _, e := range c.Env {
				if slices.Contains(unsetByDefault, e.Name) {
					t.Errorf("%s/%s: %s = %+v by default, want it unset", p.name, c.Name, e.Name, e)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no container rendered")
	}
}

// TestMCPAllowedURLs: mcpAllowedURLs reaches every container of both
// profiles as QUAVON_MCP_ALLOWED_URLS joined by commas, and changes nothing
// else: without that variable the render is the unset one, so the air-gap
// profile renders exactly as before while the value is unset.
func TestMCPAllowedURLs(t *testing.T) {
	const set = "mcpAllowedURLs={https://wiki.example.com/mcp,https://tools.example.org:8443}"
	const want = "https://wiki.example.com/mcp,https://tools.example.org:8443"
	for _, pr := range []struct {
		name  string
		files []string
	}{{"default", nil}, {"air-gap", []string{airgapValues}}} {
		t.Run(pr.name, func(t *testing.T) {
			unset := mustRender(t, pr.files)
			objs := mustRender(t, pr.files, set)
			if len(objs) != len(unset) {
				t.Fatalf("%d objects with mcpAllowedURLs set, %d without", len(objs), len(unset))
			}
			n := 0
			for _, p := range pods(objs) {
				for _, c := range containers(p) {
					var found []string
					for _, e := range c.Env {
						if e.Name == "QUAVON_MCP_ALLOWED_URLS" {
							found = append(found, e.Value)
						}
					}
					if len(found) != 1 || found[0] != want {
						t.Errorf("%s/%s: QUAVON_MCP_ALLOWED_URLS = %q, want once %q", p.name, c.Name, found, want)
					}
					c.Env = removeEnv(c.Env, "QUAVON_MCP_ALLOWED_URLS")
					n++
				}
			}
			if n == 0 {
				t.Fatal("no container rendered")
			}
			for i := range objs {
				if !reflect.DeepEqual(objs[i].obj, unset[i].obj) {
					t.Errorf("%s %s: mcpAllowedURLs changed more than QUAVON_MCP_ALLOWED_URLS", objs[i].kind, objs[i].name)
				}
			}
		})
	}
	// The schema admits every form of an https URL prefix the service
	// parses: a port, an IPv6 literal, a trailing slash or dot, an IDN host,
	// escapes in the path.
	for _, u := range []string{"https://wiki.example.com", "https://wiki.example.com/", "https://wiki.example.com./mcp/",
		"https://[2001:db8::1]:8443/mcp", "https://10.0.0.5/tools/v1", "https://bücher.example/mcp", "https://h.example/a%20b/c;v=1"} {
		if _, err := render(nil, "mcpAllowedURLs[0]="+u); err != nil {
			t.Errorf("mcpAllowedURLs[0]=%s refused: %v", u, err)
		}
	}
}

// TestOptionalSettings: mcpMaxCallsPerMinute, mcpRecheckInterval and
// auditWebhook reach every container of both profiles as their variable
// (the webhook's secret as a reference to the operator's Secret, never a
// value), and change nothing else: without those variables the render is
// the unset one. Values from a file (YAML numbers) render as from --set.
func TestOptionalSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte("mcpMaxCallsPerMinute: 300\nmcpRecheckInterval: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quoted := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(quoted, []byte("mcpRecheckInterval: \"0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretRef := func(name, key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
	}
	tests := []struct {
		name  string
		files []string
		set   []string
		want  []corev1.EnvVar
	}{
		{"calls per minute", nil, []string{"mcpMaxCallsPerMinute=120"}, []corev1.EnvVar{{Name: "QUAVON_MCP_MAX_CALLS_PER_MINUTE", Value: "120"}}},
		{"calls per minute lowest", nil, []string{"mcpMaxCallsPerMinute=1"}, []corev1.EnvVar{{Name: "QUAVON_MCP_MAX_CALLS_PER_MINUTE", Value: "1"}}},
		{"calls per minute highest", nil, []string{"mcpMaxCallsPerMinute=600"}, []corev1.EnvVar{{Name: "QUAVON_MCP_MAX_CALLS_PER_MINUTE", Value: "600"}}},
		{"recheck interval", nil, []string{"mcpRecheckInterval=30m"}, []corev1.EnvVar{{Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "30m"}}},
		{"recheck interval shortest", nil, []string{"mcpRecheckInterval=10s"}, []corev1.EnvVar{{Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "10s"}}},
		{"recheck interval in parts", nil, []string{"mcpRecheckInterval=9s1000ms"}, []corev1.EnvVar{{Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "9s1000ms"}}},
		// --set mcpRecheckInterval=0 gives the number 0: off, not unset.
		{"recheck off", nil, []string{"mcpRecheckInterval=0"}, []corev1.EnvVar{{Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "0"}}},
		{"recheck off as a string", []string{quoted}, nil, []corev1.EnvVar{{Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "0"}}},
		{"from a values file", []string{file}, nil, []corev1.EnvVar{{Name: "QUAVON_MCP_MAX_CALLS_PER_MINUTE", Value: "300"}, {Name: "QUAVON_MCP_RECHECK_INTERVAL", Value: "0"}}},
		{"audit webhook", nil, []string{"auditWebhook.url=https://audit.example.com/codelotse", "auditWebhook.secret.name=codelotse-audit"},
			[]corev1.EnvVar{{Name: "QUAVON_AUDIT_WEBHOOK_URL", Value: "https://audit.example.com/codelotse"},
				{Name: "QUAVON_AUDIT_WEBHOOK_SECRET", ValueFrom: secretRef("codelotse-audit", "secret")}}},
		{"audit webhook with its key", nil, []string{"auditWebhook.url=https://siem.internal:8443/hooks/codelotse", "auditWebhook.secret.name=siem", "auditWebhook.secret.key=whsec"},
			[]corev1.EnvVar{{Name: "QUAVON_AUDIT_WEBHOOK_URL", Value: "https://siem.internal:8443/hooks/codelotse"},
				{Name: "QUAVON_AUDIT_WEBHOOK_SECRET", ValueFrom: secretRef("siem", "whsec")}}},
		{"OAuth signing keys", nil, []string{"oauthSigning.existingSecret=codelotse-oauth"},
			[]corev1.EnvVar{{Name: "QUAVON_OAUTH_SIGNING_KEYS", ValueFrom: secretRef("codelotse-oauth", "keys")}}},
	}
	for _, tt := range tests {
		for _, pr := range []struct {
			name  string
			files []string
		}{{"default", nil}, {"air-gap", []string{airgapValues}}} {
			t.Run(tt.name+"/"+pr.name, func(t *testing.T) {
				unset := mustRender(t, pr.files)
				objs := mustRender(t, append(slices.Clone(pr.files), tt.files...), tt.set...)
				expectOnlyEnv(t, objs, unset, tt.want)
				checks := standardChecks
				if pr.files != nil {
					checks = append(slices.Clone(standardChecks), airgapChecks...)
				}
				for _, c := range checks {
					if problems := c.check(objs, airgapProfile); len(problems) > 0 {
						t.Errorf("%s: %s", c.name, strings.Join(problems, "\n"))
					}
				}
			})
		}
	}
	// The schema admits every form of a Go duration of at least 10s the
	// service parses, and "0" (off) in any unit.
	for _, d := range []string{"0", "0s", "0h", "10s", "1m", "1h", "1h30m", "1.5h", ".5m", "1.m", "10000ms", "2h45m30.5s",
		"10000000000ns", "10000000us", "10000000µs", "10000000μs", "24h"} {
		if _, err := render(nil, "mcpRecheckInterval="+d); err != nil {
			t.Errorf("mcpRecheckInterval=%s refused: %v", d, err)
		}
	}
	// The webhook's URL takes the forms of an MCP server's.
	for _, u := range []string{"https://audit.example.com", "https://audit.example.com/", "https://[2001:db8::1]:8443/hook",
		"https://10.0.0.5/events", "https://bücher.example/hook", "https://h.example/a%20b/c;v=1"} {
		if _, err := render(nil, "auditWebhook.url="+u, "auditWebhook.secret.name=audit"); err != nil {
			t.Errorf("auditWebhook.url=%s refused: %v", u, err)
		}
	}
}

// expectOnlyEnv: every container of objs has each variable of want exactly
// once, as want has it, and without them objs is the render unset.
func expectOnlyEnv(t *testing.T, objs, unset []object, want []corev1.EnvVar) {
	t.Helper()
	if len(objs) != len(unset) {
		t.Fatalf("%d objects with the values set, %d without", len(objs), len(unset))
	}
	n := 0
	for _, p := range pods(objs) {
		for _, c := range containers(p) {
			for _, w := range want {
				var found []corev1.EnvVar
				for _, e := range c.Env {
					if e.Name == w.Name {
						found = append(found, e)
					}
				}
				if len(found) != 1 || !reflect.DeepEqual(found[0], w) {
					t.Errorf("%s/%s: %s = %+v, want once %+v", p.name, c.Name, w.Name, found, w)
				}
				c.Env = removeEnv(c.Env, w.Name)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no container rendered")
	}
	for i := range objs {
		if !reflect.DeepEqual(objs[i].obj, unset[i].obj) {
			t.Errorf("%s %s: the values changed more than their variables", objs[i].kind, objs[i].name)
		}
	}
}

// TestAirgapRefusesMCPContextAllowed: whatever sets QUAVON_MCP_CONTEXT (or
// opens egress) under the air-gap profile fails the render, with a message
// that says why.
func TestAirgapRefuses(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want string
	}{
		{"mcpContext allowed", []string{"mcpContext=allowed"}, "air-gap profile requires mcpContext=disabled"},
		{"api extraEnv", []string{"api.extraEnv[0].name=QUAVON_MCP_CONTEXT", "api.extraEnv[0].value=allowed"}, "api.extraEnv may not set it"},
		{"worker extraEnv", []string{"worker.extraEnv[0].name=QUAVON_MCP_CONTEXT", "worker.extraEnv[0].value=allowed"}, "worker.extraEnv may not set it"},
		{"migrate extraEnv", []string{"migrate.extraEnv[0].name=QUAVON_MCP_CONTEXT", "migrate.extraEnv[0].value=allowed"}, "migrate.extraEnv may not set it"},
		{"network policy off", []string{"networkPolicy.enabled=false"}, "requires networkPolicy.enabled=true"},
		{"extra egress", []string{"networkPolicy.extraEgress[0].ports[0].port=443"}, "networkPolicy.extraEgress must be empty"},
		{"database anywhere", []string{"database.networkPeers[0].ipBlock.cidr=0.0.0.0/0"}, "refuses egress to 0.0.0.0/0"},
		{"dns anywhere", []string{"networkPolicy.dns[0].ipBlock.cidr=::/0"}, "refuses egress to ::/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render([]string{airgapValues}, tt.set...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render with %v = %v, want an error containing %q", tt.set, err, tt.want)
			}
		})
	}
	// The same settings render outside the air-gap profile (except extraEnv
	// naming a variable the chart sets, refused everywhere).
	if _, err := render(nil, "mcpContext=allowed", "database.networkPeers[0].ipBlock.cidr=10.0.0.5/32"); err != nil {
		t.Errorf("the standard profile refuses mcpContext=allowed: %v", err)
	}
}

func TestRefusesBadValues(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want string
	}{
		{"no database secret", []string{"database.existingSecret="}, "database.existingSecret is required"},
		{"MCP context without a key ring", []string{"mcpContext=allowed", "encryption.existingSecret="}, "mcpContext=allowed needs encryption.existingSecret"},
		{"mcpContext typo", []string{"mcpContext=yes"}, `at '/mcpContext': value must be one of 'allowed', 'disabled'`},
		{"edition typo", []string{"edition=cloud"}, `at '/edition': value must be one of 'self-hosted', 'enterprise'`},
		// values.schema.json refuses unknown keys: a secret cannot be given
		// as a value, and a misspelt setting is not silently ignored.
		{"database URL as a value", []string{"database.url=postgres://app:pw@db/codelotse"}, "additional properties 'url' not allowed"},
		{"key ring as a value", []string{"encryption.keys=k1:c2VjcmV0"}, "additional properties 'keys' not allowed"},
		{"misspelt key", []string{"mcpcontext=allowed"}, "additional properties 'mcpcontext' not allowed"},
		{"extraEnv overrides the database", []string{"api.extraEnv[0].name=QUAVON_DATABASE_URL", "api.extraEnv[0].value=postgres://x"}, "api.extraEnv may not set QUAVON_DATABASE_URL"},
		{"extraEnv overrides the switch", []string{"worker.extraEnv[0].name=QUAVON_MCP_CONTEXT", "worker.extraEnv[0].value=allowed"}, "worker.extraEnv may not set QUAVON_MCP_CONTEXT"},
		{"trusted proxy not a CIDR", []string{"trustedProxies={ingress-nginx}"}, "at '/trustedProxies/0'"},
		{"extraEnv overrides the trusted proxies", []string{"api.extraEnv[0].name=QUAVON_TRUSTED_PROXIES", "api.extraEnv[0].value=0.0.0.0/0"}, "api.extraEnv may not set QUAVON_TRUSTED_PROXIES"},
		// mcpAllowedURLs takes https URL prefixes only; the service would
		// refuse the rest at startup, the schema refuses it at install.
		{"allowed URL over http", []string{"mcpAllowedURLs={http://wiki.example.com/mcp}"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL without a scheme", []string{"mcpAllowedURLs={wiki.example.com}"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL with user info", []string{"mcpAllowedURLs[0]=https://user:pw@wiki.example.com/mcp"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL with a query", []string{"mcpAllowedURLs[0]=https://wiki.example.com/mcp?x=1"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL with a fragment", []string{"mcpAllowedURLs[0]=https://wiki.example.com/mcp#top"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL without a host", []string{"mcpAllowedURLs[0]=https:///mcp"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL with a space", []string{"mcpAllowedURLs[0]=https://wiki.example.com/m cp"}, "at '/mcpAllowedURLs/0'"},
		{"allowed URL empty", []string{"mcpAllowedURLs[0]="}, "at '/mcpAllowedURLs/0'"},
		{"second allowed URL over http", []string{"mcpAllowedURLs={https://wiki.example.com,http://tools.example.org}"}, "at '/mcpAllowedURLs/1'"},
		{"extraEnv overrides the allowed URLs", []string{"worker.extraEnv[0].name=QUAVON_MCP_ALLOWED_URLS", "worker.extraEnv[0].value=https://evil.example"}, "worker.extraEnv may not set QUAVON_MCP_ALLOWED_URLS"},
		// mcpMaxCallsPerMinute is 1 to 600, as the service takes it.
		{"no calls per minute", []string{"mcpMaxCallsPerMinute=0"}, "at '/mcpMaxCallsPerMinute': minimum: got 0, want 1"},
		{"calls per minute above 600", []string{"mcpMaxCallsPerMinute=601"}, "at '/mcpMaxCallsPerMinute': maximum: got 601, want 600"},
		{"calls per minute negative", []string{"mcpMaxCallsPerMinute=-5"}, "at '/mcpMaxCallsPerMinute'"},
		{"calls per minute not a number", []string{"mcpMaxCallsPerMinute=many"}, "at '/mcpMaxCallsPerMinute'"},
		{"calls per minute fractional", []string{"mcpMaxCallsPerMinute=1.5"}, "at '/mcpMaxCallsPerMinute'"},
		{"extraEnv overrides the calls per minute", []string{"api.extraEnv[0].name=QUAVON_MCP_MAX_CALLS_PER_MINUTE", "api.extraEnv[0].value=600"}, "api.extraEnv may not set QUAVON_MCP_MAX_CALLS_PER_MINUTE"},
		// mcpRecheckInterval is "0" or a Go duration of at least 10s: the
		// schema refuses what is no Go duration, the chart what is shorter.
		{"recheck every 5s", []string{"mcpRecheckInterval=5s"}, `mcpRecheckInterval must be "0" (off) or a Go duration of at least 10s (1h, 30m), not "5s"`},
		{"recheck just under 10s", []string{"mcpRecheckInterval=9.999s"}, `mcpRecheckInterval must be "0" (off) or a Go duration of at least 10s (1h, 30m), not "9.999s"`},
		{"recheck in parts under 10s", []string{"mcpRecheckInterval=9s999ms"}, `not "9s999ms"`},
		{"recheck in milliseconds", []string{"mcpRecheckInterval=9999ms"}, `not "9999ms"`},
		{"recheck in nanoseconds", []string{"mcpRecheckInterval=1ns"}, `not "1ns"`},
		{"recheck without a unit", []string{"mcpRecheckInterval=10"}, "at '/mcpRecheckInterval'"},
		{"recheck negative", []string{"mcpRecheckInterval=-1h"}, "at '/mcpRecheckInterval'"},
		{"recheck in days", []string{"mcpRecheckInterval=1d"}, "at '/mcpRecheckInterval'"},
		{"recheck with a space", []string{"mcpRecheckInterval=1 h"}, "at '/mcpRecheckInterval'"},
		{"recheck off as true", []string{"mcpRecheckInterval=false"}, "at '/mcpRecheckInterval'"},
		{"extraEnv overrides the recheck", []string{"worker.extraEnv[0].name=QUAVON_MCP_RECHECK_INTERVAL", "worker.extraEnv[0].value=1s"}, "worker.extraEnv may not set QUAVON_MCP_RECHECK_INTERVAL"},
		// auditWebhook: an https URL and a Secret reference, both or
		// neither; the signing secret is never a value.
		{"webhook over http", []string{"auditWebhook.url=http://audit.example.com/hook", "auditWebhook.secret.name=audit"}, "at '/auditWebhook/url'"},
		{"webhook without a scheme", []string{"auditWebhook.url=audit.example.com", "auditWebhook.secret.name=audit"}, "at '/auditWebhook/url'"},
		{"webhook with user info", []string{"auditWebhook.url=https://user:pw@audit.example.com/hook", "auditWebhook.secret.name=audit"}, "at '/auditWebhook/url'"},
		{"webhook with a query", []string{"auditWebhook.url=https://audit.example.com/hook?token=x", "auditWebhook.secret.name=audit"}, "at '/auditWebhook/url'"},
		{"webhook with a fragment", []string{"auditWebhook.url=https://audit.example.com/hook#x", "auditWebhook.secret.name=audit"}, "at '/auditWebhook/url'"},
		{"webhook without a secret", []string{"auditWebhook.url=https://audit.example.com/hook"}, "auditWebhook.url needs auditWebhook.secret.name and auditWebhook.secret.key"},
		{"webhook secret without a url", []string{"auditWebhook.secret.name=audit"}, "auditWebhook.secret.name is set without auditWebhook.url"},
		{"webhook secret without a key", []string{"auditWebhook.url=https://audit.example.com/hook", "auditWebhook.secret.name=audit", "auditWebhook.secret.key="}, "at '/auditWebhook/secret/key'"},
		{"webhook secret as a value", []string{"auditWebhook.url=https://audit.example.com/hook", "auditWebhook.secret=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "at '/auditWebhook/secret'"},
		{"webhook secret value beside the reference", []string{"auditWebhook.url=https://audit.example.com/hook", "auditWebhook.secret.name=audit", "auditWebhook.secret.value=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "additional properties 'value' not allowed"},
		{"webhook misspelt", []string{"auditWebhook.URL=https://audit.example.com/hook"}, "additional properties 'URL' not allowed"},
		{"extraEnv sets the webhook", []string{"worker.extraEnv[0].name=QUAVON_AUDIT_WEBHOOK_URL", "worker.extraEnv[0].value=https://evil.example"}, "worker.extraEnv may not set QUAVON_AUDIT_WEBHOOK_URL"},
		{"extraEnv sets the webhook secret", []string{"api.extraEnv[0].name=QUAVON_AUDIT_WEBHOOK_SECRET", "api.extraEnv[0].value=whsec_x"}, "api.extraEnv may not set QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"extraEnv sets the signing keys", []string{"worker.extraEnv[0].name=QUAVON_OAUTH_SIGNING_KEYS", "worker.extraEnv[0].value=k1:AAAA"}, "worker.extraEnv may not set QUAVON_OAUTH_SIGNING_KEYS"},
		{"a signing key as a value", []string{"oauthSigning.keys=k1:AAAA"}, "oauthSigning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(nil, tt.set...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render with %v = %v, want an error containing %q", tt.set, err, tt.want)
			}
		})
	}
}

func TestValuesReachTheContainers(t *testing.T) {
	objs := mustRender(t, nil, "mcpContext=allowed", "edition=enterprise", "privateHosts={wiki.internal,jira.internal}",
		"trustedProxies={10.244.0.0/16,fd00::/8}", "mcpAllowedURLs={https://wiki.example.com/mcp,https://jira.example.com}",
		"otel.endpoint=http://otel-collector:4318", "api.replicas=3", "worker.replicas=5",
		"api.extraEnv[0].name=QUAVON_MCP_CALL_TIMEOUT_MS", "api.extraEnv[0].value=5000",
		"mcpMaxCallsPerMinute=120", "mcpRecheckInterval=15m", "auditWebhook.url=https://siem.internal/codelotse", "auditWebhook.secret.name=codelotse-audit")
	want := map[string]string{"QUAVON_MCP_CONTEXT": "allowed", "QUAVON_EDITION": "enterprise",
		"QUAVON_MCP_PRIVATE_HOSTS": "wiki.internal,jira.internal", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318",
		"QUAVON_TRUSTED_PROXIES": "10.244.0.0/16,fd00::/8", "QUAVON_MCP_ALLOWED_URLS": "https://wiki.example.com/mcp,https://jira.example.com",
		"QUAVON_MCP_MAX_CALLS_PER_MINUTE": "120", "QUAVON_MCP_RECHECK_INTERVAL": "15m", "QUAVON_AUDIT_WEBHOOK_URL": "https://siem.internal/codelotse"}
	for _, p := range pods(objs) {
		for _, c := range p.spec.Containers {
			for name, v := range want {
				if got := envValue(c, name); got != v {
					t.Errorf("%s/%s: %s = %q, want %q", p.name, c.Name, name, got, v)
				}
			}
		}
	}
	replicas := map[string]int32{}
	for _, o := range objs {
		if d, ok := o.obj.(*appsv1.Deployment); ok {
			replicas[d.Labels["app.kubernetes.io/component"]] = *d.Spec.Replicas
			if c := d.Spec.Template.Spec.Containers[0]; d.Name == "codelotse-api" && envValue(c, "QUAVON_MCP_CALL_TIMEOUT_MS") != "5000" {
				t.Errorf("api.extraEnv did not reach the api container: %v", c.Env)
			}
		}
	}
	if replicas["api"] != 3 || replicas["worker"] != 5 {
		t.Errorf("replicas = %v, want api 3 and worker 5", replicas)
	}
}

func TestServiceMonitor(t *testing.T) {
	if n := count(mustRender(t, nil), "ServiceMonitor"); n != 0 {
		t.Errorf("a ServiceMonitor by default (%d); it needs the prometheus-operator CRD", n)
	}
	objs := mustRender(t, []string{airgapValues}, "metrics.serviceMonitor.enabled=true")
	var sm *monitoringv1.ServiceMonitor
	for _, o := range objs {
		if s, ok := o.obj.(*monitoringv1.ServiceMonitor); ok {
			sm = s
		}
	}
	if sm == nil {
		t.Fatal("metrics.serviceMonitor.enabled=true rendered no ServiceMonitor")
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" || sm.Spec.Endpoints[0].Port != "http" {
		t.Fatalf("ServiceMonitor endpoints = %+v, want port http path /metrics", sm.Spec.Endpoints)
	}
	// The alerts and the dashboard select job="codelotse" and component:
	// the job is the Services' app.kubernetes.io/name, the component their
	// app.kubernetes.io/component.
	relabel := sm.Spec.Endpoints[0].RelabelConfigs
	if sm.Spec.JobLabel != "app.kubernetes.io/name" || len(relabel) != 1 || relabel[0].TargetLabel != "component" ||
		len(relabel[0].SourceLabels) != 1 || relabel[0].SourceLabels[0] != "__meta_kubernetes_service_label_app_kubernetes_io_component" ||
		relabel[0].Action != "" || relabel[0].Regex != "" || relabel[0].Replacement != nil {
		t.Errorf("ServiceMonitor jobLabel %q, relabelings %+v; want job from app.kubernetes.io/name, component from app.kubernetes.io/component", sm.Spec.JobLabel, relabel)
	}
	scraped := map[string]bool{}
	for _, o := range objs {
		if s, ok := o.obj.(*corev1.Service); ok && matches(&sm.Spec.Selector, s.Labels) {
			scraped[s.Labels["app.kubernetes.io/component"]] = true
		}
	}
	if !scraped["api"] || !scraped["worker"] {
		t.Errorf("the ServiceMonitor selects the Services of %v, want api and worker", scraped)
	}
	for _, o := range objs {
		if s, ok := o.obj.(*corev1.Service); ok && (s.Labels[sm.Spec.JobLabel] != "codelotse" || s.Labels["app.kubernetes.io/component"] == "") {
			t.Errorf("Service %s: labels %v, want %s: codelotse and a component", s.Name, s.Labels, sm.Spec.JobLabel)
		}
	}
}

func expectKinds(t *testing.T, objs []object, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, o := range objs {
		got[o.kind]++
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d %s rendered, want %d", got[k], k, n)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s rendered", k)
		}
	}
}

func count(objs []object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.kind == kind {
			n++
		}
	}
	return n
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
