package helm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
)

// agentChart is the pull-mode agent's chart, deploy/helm/flotilla-agent,
// released under its own name.
const agentChart = "flotilla-agent"

// agentValues are the values the agent's chart needs: a cluster name and
// the hub's kubeconfig, here from a value.
var agentValues = []string{"--set", "clusterName=edge-1", "--set", "hub.kubeconfig=apiVersion: v1"}

// TestAgentChartAcceptedByMember has a real member apiserver accept every
// object of the agent's chart with a server-side dry-run apply, with the
// chart's own hub Secret and with an existing one.
func TestAgentChartAcceptedByMember(t *testing.T) {
	kinds := acceptedByServer(t, renderChart(t, agentChart, agentValues...))
	want := []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "Secret", "ServiceAccount"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}
}

// TestAgentChartDeployment checks what the agent's Deployment promises:
// one replica replaced with Recreate (the agent has no leader election),
// the hardened security context and requests, the agent command with the
// cluster name and the mounted hub kubeconfig, and the member reached
// through the chart's ServiceAccount.
func TestAgentChartDeployment(t *testing.T) {
	for _, tc := range []struct {
		name, secret string
		args         []string
		rendersHub   bool
	}{
		{"kubeconfig value", "flotilla-agent-hub", agentValues, true},
		{"existing Secret", "edge-1-hub", []string{"--set", "clusterName=edge-1", "--set", "hub.existingSecret=edge-1-hub"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderChart(t, agentChart, tc.args...)
			d := into[appsv1.Deployment](t, one(t, objs, "Deployment"))
			if got := ptr.Deref(d.Spec.Replicas, 0); got != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("replicas %d, strategy %q; want 1 replica replaced with Recreate (no two agents at once)", got, d.Spec.Strategy.Type)
			}
			pod := d.Spec.Template.Spec
			if pod.ServiceAccountName != agentChart {
				t.Errorf("serviceAccountName = %q, want %q", pod.ServiceAccountName, agentChart)
			}
			checkHardened(t, pod)
			args := pod.Containers[0].Args
			if len(args) == 0 || args[0] != "agent" {
				t.Fatalf("args = %v, want the agent command first", args)
			}
			for flag, want := range map[string]string{"hub-kubeconfig": "/etc/flotilla/hub/kubeconfig", "cluster-name": "edge-1", "fleet": "flotilla", "api-groups": "flotilla"} {
				if got, _ := flagValue(args, flag); got != want {
					t.Errorf("--%s = %q, want %q", flag, got, want)
				}
			}
			// The chart's defaults are the agent's own (Karmada's).
			for flag, want := range map[string]time.Duration{
				"cluster-lease-duration":          agent.DefaultAgentLeaseDuration,
				"cluster-status-update-frequency": agent.DefaultAgentStatusInterval,
			} {
				if v, _ := flagValue(args, flag); v == "" || mustDuration(t, v) != want {
					t.Errorf("--%s = %q, want the agent's default %s", flag, v, want)
				}
			}
			if _, set := flagValue(args, "kubeconfig"); set {
				t.Error("--kubeconfig is set: the agent must reach its member with the pod's ServiceAccount")
			}
			i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil })
			if i < 0 || pod.Volumes[i].Secret.SecretName != tc.secret {
				t.Fatalf("volumes %+v, want the Secret %s", pod.Volumes, tc.secret)
			}
			mounted := slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
				return m.Name == pod.Volumes[i].Name && m.MountPath == "/etc/flotilla/hub" && m.ReadOnly
			})
			if !mounted {
				t.Errorf("the hub Secret is not mounted read-only at /etc/flotilla/hub: %+v", pod.Containers[0].VolumeMounts)
			}
			secrets := pick(objs, "Secret")
			if got := len(secrets) == 1; got != tc.rendersHub {
				t.Fatalf("the chart renders %d Secrets; want its own hub Secret: %v", len(secrets), tc.rendersHub)
			}
			if tc.rendersHub {
				if s := into[corev1.Secret](t, secrets[0]); s.Name != tc.secret || string(s.Data["kubeconfig"]) != "apiVersion: v1" {
					t.Errorf("Secret %s holds %q under kubeconfig, want hub.kubeconfig in %s", s.Name, s.Data["kubeconfig"], tc.secret)
				}
			}
		})
	}
}

// TestAgentChartRBAC: by default the agent may do anything in its member,
// as Karmada's agent (it applies whatever kinds the hub propagates), bound
// to the chart's ServiceAccount; rbac.rules replaces that.
func TestAgentChartRBAC(t *testing.T) {
	objs := renderChart(t, agentChart, agentValues...)
	cr := into[rbacv1.ClusterRole](t, one(t, objs, "ClusterRole"))
	everything := slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.APIGroups, []string{"*"}) && slices.Equal(r.Resources, []string{"*"}) && slices.Equal(r.Verbs, []string{"*"})
	})
	if !everything {
		t.Errorf("ClusterRole rules %+v, want every resource by default", cr.Rules)
	}
	crb := into[rbacv1.ClusterRoleBinding](t, one(t, objs, "ClusterRoleBinding"))
	if want := (rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: agentChart, Namespace: namespace}); crb.RoleRef.Name != cr.Name || !slices.Equal(crb.Subjects, []rbacv1.Subject{want}) {
		t.Errorf("ClusterRoleBinding %+v %+v, want %s bound to %+v", crb.RoleRef, crb.Subjects, cr.Name, want)
	}
	narrow := renderChart(t, agentChart, append(slices.Clone(agentValues), "--set-json", `rbac.rules=[{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get","patch"]}]`)...)
	want := []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}}}
	if diff := cmp.Diff(want, into[rbacv1.ClusterRole](t, one(t, narrow, "ClusterRole")).Rules); diff != "" {
		t.Errorf("rbac.rules (-want +got):\n%s", diff)
	}
}

// TestAgentChartCommonPreset: rbac.preset=common grants the common kinds
// and what the agent needs for itself, and no wildcard anywhere (the
// default's "*" rules are gone); extraRules are added to it.
func TestAgentChartCommonPreset(t *testing.T) {
	extra := rbacv1.PolicyRule{APIGroups: []string{"argoproj.io"}, Resources: []string{"rollouts"}, Verbs: []string{"get", "patch"}}
	objs := renderChart(t, agentChart, append(slices.Clone(agentValues), "--set", "rbac.preset=common",
		"--set-json", `rbac.extraRules=[{"apiGroups":["argoproj.io"],"resources":["rollouts"],"verbs":["get","patch"]}]`)...)
	rules := into[rbacv1.ClusterRole](t, one(t, objs, "ClusterRole")).Rules
	for _, r := range rules {
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.NonResourceURLs, r.ResourceNames} {
			if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
				t.Errorf("preset common grants a wildcard: %+v", r)
			}
		}
	}
	allows := func(group, resource, verb string) bool {
		return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	write := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	for group, resources := range map[string][]string{
		"":                  {"namespaces", "configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims"},
		"apps":              {"deployments", "statefulsets", "daemonsets"},
		"batch":             {"jobs", "cronjobs"},
		"networking.k8s.io": {"ingresses"},
		"autoscaling":       {"horizontalpodautoscalers"},
		"policy":            {"poddisruptionbudgets"},
		// Multi-cluster services: imported slices applied, exported
		// ones read and reported.
		"discovery.k8s.io":      {"endpointslices"},
		"multicluster.x-k8s.io": {"serviceexports", "serviceimports"},
	} {
		for _, res := range resources {
			for _, verb := range write {
				if !allows(group, res, verb) {
					t.Errorf("preset common does not allow %s on %s.%s", verb, res, group)
				}
			}
		}
	}
	for _, res := range []string{"nodes", "pods"} {
		for _, verb := range []string{"get", "list", "watch"} {
			if !allows("", res, verb) {
				t.Errorf("preset common does not allow %s on %s (the resource summary)", verb, res)
			}
		}
		if allows("", res, "delete") || allows("", res, "patch") {
			t.Errorf("preset common writes %s; the agent only reads them", res)
		}
	}
	if allows("rbac.authorization.k8s.io", "clusterroles", "create") || allows("", "nodes", "update") {
		t.Error("preset common grants RBAC or node writes")
	}
	if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool { return cmp.Equal(r, extra) }) {
		t.Errorf("extraRules %+v not among the rules", extra)
	}
	checkRefused(t, agentChart, []refusal{
		{"unknown preset", namespace, append(slices.Clone(agentValues), "--set", "rbac.preset=everything"), `rbac.preset "everything": want "" (rbac.rules, every resource by default) or common`},
	})
}

// TestAgentChartRefusesBadValues: the agent's chart fails, naming the
// value to set, without a cluster name or a hub kubeconfig, with both hub
// values, with a cluster name the hub refuses, and outside flotilla-system.
func TestAgentChartRefusesBadValues(t *testing.T) {
	hub := []string{"--set", "hub.existingSecret=edge-1-hub"}
	checkRefused(t, agentChart, []refusal{
		{"no cluster name", namespace, hub, "clusterName is required: set clusterName to the member's Cluster in the hub"},
		{"cluster name not a DNS label", namespace, append([]string{"--set", "clusterName=Edge_1"}, hub...), `clusterName "Edge_1": want a DNS label`},
		{"cluster name too long", namespace, append([]string{"--set", "clusterName=" + string(slices.Repeat([]byte("a"), 49))}, hub...), "of at most 48 characters"},
		{"no hub kubeconfig", namespace, []string{"--set", "clusterName=edge-1"}, "the hub's kubeconfig is required: set hub.existingSecret"},
		{"both hub values", namespace, append(slices.Clone(agentValues), hub...), "set one of hub.existingSecret and hub.kubeconfig, not both"},
		{"another namespace", "default", agentValues, `install the chart into the namespace flotilla-system (-n flotilla-system), not "default"`},
		{"unknown API groups", namespace, append(slices.Clone(agentValues), "--set", "apiGroups=karmda"), `apiGroups "karmda": want flotilla or karmada`},
	})
}

// TestAgentChartAPIGroups: apiGroups reaches the agent as --api-groups.
func TestAgentChartAPIGroups(t *testing.T) {
	d := into[appsv1.Deployment](t, one(t, renderChart(t, agentChart, append(slices.Clone(agentValues), "--set", "apiGroups=karmada")...), "Deployment"))
	if got, _ := flagValue(d.Spec.Template.Spec.Containers[0].Args, "api-groups"); got != "karmada" {
		t.Errorf("--api-groups = %q, want karmada from apiGroups", got)
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
