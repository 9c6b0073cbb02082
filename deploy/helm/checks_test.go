package helm_test

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	appsv1 "k8s.io/api/apps/v1"
)

// profile is what a check needs to know about the values rendered.
type profile struct {
	airgap   bool
	dbPort   int32
	dbPeers  []networkingv1.NetworkPolicyPeer
	dnsPeers []networkingv1.NetworkPolicyPeer
}

// airgapProfile carries the database and DNS peers of values.yaml, the
// only egress destinations the air-gap profile may allow.
var airgapProfile = func() profile {
	raw, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		panic(err)
	}
	var v struct {
		Database struct {
			Port         int32                            `json:"port"`
			NetworkPeers []networkingv1.NetworkPolicyPeer `json:"networkPeers"`
		} `json:"database"`
		NetworkPolicy struct {
			DNS []networkingv1.NetworkPolicyPeer `json:"dns"`
		} `json:"networkPolicy"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		panic(err)
	}
	return profile{airgap: true, dbPort: v.Database.Port, dbPeers: v.Database.NetworkPeers, dnsPeers: v.NetworkPolicy.DNS}
}()

type check struct {
	name  string
	check func([]object, profile) []string
}

var standardChecks = []check{
	{"mcp context disabled in every container", checkMCPContextDisabled},
	{"hardened pods", checkHardened},
	{"secrets referenced, never inlined", checkSecretsReferenced},
	{"migration job is a pre-install and pre-upgrade hook", checkMigrationHook},
	{"probes", checkProbes},
	{"pod disruption budgets", checkPDB},
	{"network policy over every pod", checkNetworkPolicySelectsEveryPod},
}

var airgapChecks = []check{
	{"egress only to the database and DNS", checkAirgapEgress},
}

// pod is a pod template of a Deployment or a Job.
type pod struct {
	name   string
	labels map[string]string
	spec   *corev1.PodSpec
}

func pods(objs []object) []pod {
	var ps []pod
	for _, o := range objs {
		switch w := o.obj.(type) {
		case *appsv1.Deployment:
			ps = append(ps, pod{o.kind + "/" + w.Name, w.Spec.Template.Labels, &w.Spec.Template.Spec})
		case *batchv1.Job:
			ps = append(ps, pod{o.kind + "/" + w.Name, w.Spec.Template.Labels, &w.Spec.Template.Spec})
		}
	}
	return ps
}

func containers(p pod) []*corev1.Container {
	var cs []*corev1.Container
	for i := range p.spec.InitContainers {
		cs = append(cs, &p.spec.InitContainers[i])
	}
	for i := range p.spec.Containers {
		cs = append(cs, &p.spec.Containers[i])
	}
	return cs
}

func matches(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && !s.Empty() && s.Matches(labels.Set(l))
}

func checkMCPContextDisabled(objs []object, _ profile) []string {
	var problems []string
	ps := pods(objs)
	if len(ps) == 0 {
		problems = append(problems, "no pods rendered")
	}
	for _, p := range ps {
		for _, c := range containers(p) {
			var found []corev1.EnvVar
			for _, e := range c.Env {
				if e.Name == "QUAVON_MCP_CONTEXT" {
					found = append(found, e)
				}
			}
			if len(found) != 1 || found[0].Value != "disabled" || found[0].ValueFrom != nil {
				problems = append(problems, fmt.Sprintf("%s/%s: QUAVON_MCP_CONTEXT = %+v, want exactly one literal \"disabled\"", p.name, c.Name, found))
			}
			if len(c.EnvFrom) > 0 {
				problems = append(problems, fmt.Sprintf("%s/%s: envFrom could set QUAVON_MCP_CONTEXT", p.name, c.Name))
			}
		}
	}
	return problems
}

func checkHardened(objs []object, _ profile) []string {
	var problems []string
	for _, p := range pods(objs) {
		psc := p.spec.SecurityContext
		if psc == nil {
			psc = &corev1.PodSecurityContext{}
		}
		if p.spec.HostNetwork || p.spec.HostPID || p.spec.HostIPC {
			problems = append(problems, p.name+": shares a host namespace")
		}
		if p.spec.AutomountServiceAccountToken == nil || *p.spec.AutomountServiceAccountToken {
			problems = append(problems, p.name+": mounts a service account token")
		}
		for _, c := range containers(p) {
			sc := c.SecurityContext
			if sc == nil {
				sc = &corev1.SecurityContext{}
			}
			at := p.name + "/" + c.Name
			nonRoot := first(sc.RunAsNonRoot, psc.RunAsNonRoot)
			user := first(sc.RunAsUser, psc.RunAsUser)
			if nonRoot == nil || !*nonRoot || user == nil || *user == 0 {
				problems = append(problems, at+": not runAsNonRoot with a non-zero runAsUser")
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				problems = append(problems, at+": root filesystem not read-only")
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				problems = append(problems, at+": privilege escalation allowed")
			}
			if sc.Privileged != nil && *sc.Privileged {
				problems = append(problems, at+": privileged")
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
				problems = append(problems, at+": capabilities not exactly drop ALL")
			}
			seccomp := first(sc.SeccompProfile, psc.SeccompProfile)
			if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
				problems = append(problems, at+": seccomp profile not RuntimeDefault")
			}
		}
	}
	return problems
}

// first returns the container-level setting, else the pod-level one.
func first[T any](container, pod *T) *T {
	if container != nil {
		return container
	}
	return pod
}

// secretEnv are the variables that hold secrets; each, when set, must come
// from a Secret reference, and the database URL is in every container.
var secretEnv = []string{"QUAVON_DATABASE_URL", "QUAVON_ENCRYPTION_KEYS", "QUAVON_LLM_API_KEY", "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_OAUTH_SIGNING_KEYS"}

func checkSecretsReferenced(objs []object, _ profile) []string {
	var problems []string
	for _, o := range objs {
		if o.kind == "Secret" || (o.kind == "ConfigMap" && !isDashboard(o)) {
			problems = append(problems, fmt.Sprintf("the chart renders %s %s: secrets must come from existing Secrets", o.kind, o.name))
		}
	}
	for _, p := range pods(objs) {
		for _, c := range containers(p) {
			for _, name := range secretEnv {
				n := 0
				for _, e := range c.Env {
					if e.Name != name {
						continue
					}
					n++
					if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
						e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
						problems = append(problems, fmt.Sprintf("%s/%s: %s is not a Secret reference", p.name, c.Name, name))
					}
				}
				if n > 1 || (n == 0 && name == "QUAVON_DATABASE_URL") {
					problems = append(problems, fmt.Sprintf("%s/%s: %s set %d times, want once", p.name, c.Name, name, n))
				}
			}
		}
	}
	return problems
}

// isDashboard: the one ConfigMap the chart may render holds the Grafana
// dashboard of files/dashboard.json and nothing else.
func isDashboard(o object) bool {
	cm, ok := o.obj.(*corev1.ConfigMap)
	if !ok || len(cm.BinaryData) > 0 || len(cm.Data) != 1 {
		return false
	}
	raw, err := os.ReadFile(dashboardFile)
	return err == nil && cm.Data[dashboardKey] == strings.TrimRight(string(raw), "\n")
}

func checkMigrationHook(objs []object, _ profile) []string {
	var jobs []object
	for _, o := range objs {
		if o.kind == "Job" {
			jobs = append(jobs, o)
		}
	}
	if len(jobs) != 1 {
		return []string{fmt.Sprintf("%d Jobs, want one migration Job", len(jobs))}
	}
	var problems []string
	j := jobs[0]
	if j.hook == nil {
		return []string{"the migration Job is not a Helm hook"}
	}
	for _, ev := range []release.HookEvent{release.HookPreInstall, release.HookPreUpgrade} {
		if !slices.Contains(j.hook.Events, ev) {
			problems = append(problems, fmt.Sprintf("the migration Job is not a %s hook (events %v)", ev, j.hook.Events))
		}
	}
	c := j.obj.(*batchv1.Job).Spec.Template.Spec.Containers
	if len(c) != 1 || !slices.Equal(c[0].Args, []string{"migrate"}) {
		problems = append(problems, "the migration Job does not run `codelotse migrate`")
	}
	// Its own NetworkPolicy must exist before it: a hook of the same
	// events with a lower weight.
	var guarded bool
	for _, o := range objs {
		if np, ok := o.obj.(*networkingv1.NetworkPolicy); ok && o.hook != nil && o.hook.Weight < j.hook.Weight &&
			slices.Contains(o.hook.Events, release.HookPreInstall) && matches(&np.Spec.PodSelector, j.obj.(*batchv1.Job).Spec.Template.Labels) {
			guarded = true
		}
	}
	if !guarded && count(objs, "NetworkPolicy") > 0 {
		problems = append(problems, "no pre-install NetworkPolicy hook runs before the migration Job")
	}
	return problems
}

func checkProbes(objs []object, _ profile) []string {
	var problems []string
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !probes(c.ReadinessProbe, "/readyz") || !probes(c.LivenessProbe, "/healthz") {
				problems = append(problems, fmt.Sprintf("%s/%s: want readiness on /readyz and liveness on /healthz", d.Name, c.Name))
			}
		}
	}
	return problems
}

func probes(p *corev1.Probe, path string) bool {
	return p != nil && p.HTTPGet != nil && p.HTTPGet.Path == path && p.HTTPGet.Port == intstr.FromString("http")
}

func checkPDB(objs []object, _ profile) []string {
	var problems []string
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		covered := false
		for _, b := range objs {
			if pdb, ok := b.obj.(*policyv1.PodDisruptionBudget); ok && matches(pdb.Spec.Selector, d.Spec.Template.Labels) &&
				(pdb.Spec.MaxUnavailable != nil || pdb.Spec.MinAvailable != nil) {
				covered = true
			}
		}
		if !covered {
			problems = append(problems, "no PodDisruptionBudget covers "+d.Name)
		}
	}
	return problems
}

func checkNetworkPolicySelectsEveryPod(objs []object, _ profile) []string {
	var problems []string
	for _, p := range pods(objs) {
		var ingress, egress bool
		for _, o := range objs {
			np, ok := o.obj.(*networkingv1.NetworkPolicy)
			if !ok || !matches(&np.Spec.PodSelector, p.labels) {
				continue
			}
			ingress = ingress || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
			egress = egress || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
		if !ingress || !egress {
			problems = append(problems, fmt.Sprintf("%s: no NetworkPolicy restricts its ingress (%v) and egress (%v)", p.name, ingress, egress))
		}
	}
	return problems
}

// checkAirgapEgress: every egress rule of every NetworkPolicy names its
// destinations (a rule without `to` allows all of them) and is either the
// database rule (the database's peers, its port) or the DNS rule (the DNS
// peers, port 53); no peer is 0.0.0.0/0 or ::/0.
func checkAirgapEgress(objs []object, pr profile) []string {
	var problems []string
	dns := []networkingv1.NetworkPolicyPort{port(53, corev1.ProtocolUDP), port(53, corev1.ProtocolTCP)}
	db := []networkingv1.NetworkPolicyPort{port(pr.dbPort, corev1.ProtocolTCP)}
	for _, o := range objs {
		np, ok := o.obj.(*networkingv1.NetworkPolicy)
		if !ok {
			continue
		}
		for i, r := range np.Spec.Egress {
			at := fmt.Sprintf("NetworkPolicy %s egress[%d]", np.Name, i)
			if len(r.To) == 0 {
				problems = append(problems, at+": no `to`, so every destination")
			}
			for _, peer := range r.To {
				if peer.IPBlock != nil {
					if pfx, err := netip.ParsePrefix(peer.IPBlock.CIDR); err != nil || pfx.Bits() == 0 {
						problems = append(problems, at+": egress to "+peer.IPBlock.CIDR)
					}
				}
			}
			isDB := equality.Semantic.DeepEqual(r.Ports, db) && equality.Semantic.DeepEqual(r.To, pr.dbPeers)
			isDNS := equality.Semantic.DeepEqual(r.Ports, dns) && equality.Semantic.DeepEqual(r.To, pr.dnsPeers)
			if !isDB && !isDNS {
				problems = append(problems, fmt.Sprintf("%s: neither the database nor DNS: %+v", at, r))
			}
		}
	}
	return problems
}

func port(n int32, proto corev1.Protocol) networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(n)
	return networkingv1.NetworkPolicyPort{Port: &p, Protocol: &proto}
}
