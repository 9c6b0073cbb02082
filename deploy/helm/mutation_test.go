package helm_test

import (
	"testing"

	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1 "k8s.io/api/apps/v1"
)

// TestChecksFailWhenAPropertyIsRemoved proves each check can fail: the
// air-gap render passes every check, and each mutation below removes one
// property from it, which its check must then report.
func TestChecksFailWhenAPropertyIsRemoved(t *testing.T) {
	no, yes := false, true
	root := int64(0)
	tests := []struct {
		name   string
		check  func([]object, profile) []string
		mutate func(t *testing.T, objs []object) []object
	}{
		{"env missing in the worker", checkMCPContextDisabled, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-worker")
			c.Env = removeEnv(c.Env, "QUAVON_MCP_CONTEXT")
			return objs
		}},
		{"env allowed in the migration job", checkMCPContextDisabled, func(t *testing.T, objs []object) []object {
			setEnv(container(t, objs, "codelotse-migrate"), "QUAVON_MCP_CONTEXT", "allowed")
			return objs
		}},
		{"env overridden by a later duplicate", checkMCPContextDisabled, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-api")
			c.Env = append(c.Env, corev1.EnvVar{Name: "QUAVON_MCP_CONTEXT", Value: "allowed"})
			return objs
		}},
		{"envFrom", checkMCPContextDisabled, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-api")
			c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}
			return objs
		}},
		{"runAsNonRoot", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-api").SecurityContext.RunAsNonRoot = &no
			return objs
		}},
		{"runAsUser 0", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-migrate").SecurityContext.RunAsUser = &root
			return objs
		}},
		{"read-only root filesystem", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-worker").SecurityContext.ReadOnlyRootFilesystem = nil
			return objs
		}},
		{"privilege escalation", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-migrate").SecurityContext.AllowPrivilegeEscalation = &yes
			return objs
		}},
		{"privileged", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-api").SecurityContext.Privileged = &yes
			return objs
		}},
		{"capabilities", checkHardened, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-worker").SecurityContext.Capabilities.Drop = nil
			return objs
		}},
		{"seccomp", checkHardened, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-api")
			c.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
			return objs
		}},
		{"service account token", checkHardened, func(t *testing.T, objs []object) []object {
			podSpec(t, objs, "codelotse-worker").AutomountServiceAccountToken = nil
			return objs
		}},
		{"database URL inlined", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			setEnv(container(t, objs, "codelotse-api"), "QUAVON_DATABASE_URL", "postgres://app:pw@db/codelotse")
			return objs
		}},
		{"key ring inlined", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			setEnv(container(t, objs, "codelotse-worker"), "QUAVON_ENCRYPTION_KEYS", "k1:c2VjcmV0")
			return objs
		}},
		{"webhook secret inlined", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-worker")
			c.Env = append(c.Env, corev1.EnvVar{Name: "QUAVON_AUDIT_WEBHOOK_SECRET", Value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
			return objs
		}},
		{"database URL missing", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			c := container(t, objs, "codelotse-migrate")
			c.Env = removeEnv(c.Env, "QUAVON_DATABASE_URL")
			return objs
		}},
		{"a Secret rendered", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			return append(objs, object{kind: "Secret", name: "codelotse-db", obj: &corev1.Secret{}})
		}},
		{"a ConfigMap rendered", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			return append(objs, object{kind: "ConfigMap", name: "codelotse-env", obj: &corev1.ConfigMap{Data: map[string]string{"url": "postgres://app:pw@db/codelotse"}}})
		}},
		{"a value beside the dashboard", checkSecretsReferenced, func(t *testing.T, objs []object) []object {
			return append(objs, object{kind: "ConfigMap", name: "codelotse-dashboard", obj: &corev1.ConfigMap{
				Data: map[string]string{dashboardKey: dashboardJSON(t), "url": "postgres://app:pw@db/codelotse"}}})
		}},
		{"migration job not a hook", checkMigrationHook, func(t *testing.T, objs []object) []object {
			find(t, objs, "Job", "codelotse-migrate").hook = nil
			return objs
		}},
		{"migration job not pre-upgrade", checkMigrationHook, func(t *testing.T, objs []object) []object {
			find(t, objs, "Job", "codelotse-migrate").hook.Events = []release.HookEvent{release.HookPreInstall}
			return objs
		}},
		{"migration job before its network policy", checkMigrationHook, func(t *testing.T, objs []object) []object {
			find(t, objs, "NetworkPolicy", "codelotse-migrate").hook.Weight = 5
			return objs
		}},
		{"readiness probe", checkProbes, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-worker").ReadinessProbe = nil
			return objs
		}},
		{"liveness path", checkProbes, func(t *testing.T, objs []object) []object {
			container(t, objs, "codelotse-api").LivenessProbe.HTTPGet.Path = "/"
			return objs
		}},
		{"pdb", checkPDB, func(t *testing.T, objs []object) []object {
			return remove(objs, "PodDisruptionBudget", "codelotse-worker")
		}},
		{"network policy without egress", checkNetworkPolicySelectsEveryPod, func(t *testing.T, objs []object) []object {
			for _, o := range objs {
				if np, ok := o.obj.(*networkingv1.NetworkPolicy); ok {
					np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
				}
			}
			return objs
		}},
		{"network policy misses the worker", checkNetworkPolicySelectsEveryPod, func(t *testing.T, objs []object) []object {
			np := find(t, objs, "NetworkPolicy", "codelotse").obj.(*networkingv1.NetworkPolicy)
			np.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] = "api"
			return objs
		}},
		{"egress to 0.0.0.0/0", checkAirgapEgress, func(t *testing.T, objs []object) []object {
			np := find(t, objs, "NetworkPolicy", "codelotse").obj.(*networkingv1.NetworkPolicy)
			np.Spec.Egress[0].To = append(np.Spec.Egress[0].To, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}})
			return objs
		}},
		{"egress to ::/0", checkAirgapEgress, func(t *testing.T, objs []object) []object {
			np := find(t, objs, "NetworkPolicy", "codelotse-migrate").obj.(*networkingv1.NetworkPolicy)
			np.Spec.Egress[1].To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "::/0"}}}
			return objs
		}},
		{"egress rule without destinations", checkAirgapEgress, func(t *testing.T, objs []object) []object {
			np := find(t, objs, "NetworkPolicy", "codelotse").obj.(*networkingv1.NetworkPolicy)
			https := intstr.FromInt32(443)
			np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &https}}})
			return objs
		}},
		{"another port to the database", checkAirgapEgress, func(t *testing.T, objs []object) []object {
			np := find(t, objs, "NetworkPolicy", "codelotse").obj.(*networkingv1.NetworkPolicy)
			https := intstr.FromInt32(443)
			np.Spec.Egress[0].Ports = append(np.Spec.Egress[0].Ports, networkingv1.NetworkPolicyPort{Port: &https})
			return objs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := mustRender(t, []string{airgapValues})
			if problems := tt.check(objs, airgapProfile); len(problems) > 0 {
				t.Fatalf("the unmodified render fails the check: %v", problems)
			}
			if problems := tt.check(tt.mutate(t, objs), airgapProfile); len(problems) == 0 {
				t.Error("the check passes without the property")
			}
		})
	}
}

func find(t *testing.T, objs []object, kind, name string) *object {
	t.Helper()
	for i := range objs {
		if objs[i].kind == kind && objs[i].name == name {
			return &objs[i]
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

func remove(objs []object, kind, name string) []object {
	var out []object
	for _, o := range objs {
		if o.kind != kind || o.name != name {
			out = append(out, o)
		}
	}
	return out
}

// podSpec finds the pod template of a Deployment or the Job by name.
func podSpec(t *testing.T, objs []object, name string) *corev1.PodSpec {
	t.Helper()
	for _, o := range objs {
		switch w := o.obj.(type) {
		case *appsv1.Deployment:
			if w.Name == name {
				return &w.Spec.Template.Spec
			}
		case *batchv1.Job:
			if w.Name == name {
				return &w.Spec.Template.Spec
			}
		}
	}
	t.Fatalf("no workload %s", name)
	return nil
}

func container(t *testing.T, objs []object, workload string) *corev1.Container {
	t.Helper()
	return &podSpec(t, objs, workload).Containers[0]
}

func setEnv(c *corev1.Container, name, value string) {
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i] = corev1.EnvVar{Name: name, Value: value}
		}
	}
}

func removeEnv(env []corev1.EnvVar, name string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return out
}
