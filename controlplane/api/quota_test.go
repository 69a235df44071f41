package api

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rl builds a ResourceList from name, quantity pairs.
func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestReplicaUsage(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		per      corev1.ResourceList
		replicas int64
		want     corev1.ResourceList
	}{
		// 0.1 CPU thirty times is exactly 3: a float64 sum gives 3.0000000000000004.
		{"tenths of a CPU", rl("cpu", "100m"), 30, rl("cpu", "3", "pods", "30")},
		{"memory", rl("memory", "256Mi"), 3, rl("memory", "768Mi", "pods", "3")},
		{"no request still counts pods", nil, 2, rl("pods", "2")},
		{"no replicas", rl("cpu", "1"), 0, rl()},
	} {
		got := ReplicaUsage(tc.per, tc.replicas)
		if !sameResources(got, tc.want) {
			t.Errorf("%s: ReplicaUsage = %v, want %v", tc.desc, got, tc.want)
		}
	}
}

func TestQuotaExceeded(t *testing.T) {
	for _, tc := range []struct {
		desc                     string
		overall, used, requested corev1.ResourceList
		want                     []string
	}{
		{"fits exactly", rl("cpu", "3"), rl("cpu", "1"), rl("cpu", "2"), nil},
		{"one millicore over", rl("cpu", "3"), rl("cpu", "1"), rl("cpu", "2001m"), []string{"cpu: 2001m requested, 1 used of 3"}},
		{"requests.cpu counts cpu", rl("requests.cpu", "2"), rl("cpu", "1500m"), rl("cpu", "1"), []string{"requests.cpu: 1 requested, 1500m used of 2"}},
		{"pods", rl("pods", "4"), rl("pods", "3"), rl("pods", "2", "cpu", "1"), []string{"pods: 2 requested, 3 used of 4"}},
		{"limits.* is the members'", rl("limits.cpu", "1"), nil, rl("cpu", "5"), nil},
		{"already over, asking nothing of it", rl("cpu", "1", "pods", "10"), rl("cpu", "2", "pods", "1"), rl("pods", "1"), nil},
		{"unlimited resource", rl("memory", "1Gi"), nil, rl("cpu", "64"), nil},
		{"two broken, sorted", rl("memory", "1Gi", "cpu", "1"), nil, rl("cpu", "2", "memory", "2Gi"), []string{"cpu: 2 requested, 0 used of 1", "memory: 2Gi requested, 0 used of 1Gi"}},
	} {
		var got []string
		for _, e := range QuotaExceeded(tc.overall, tc.used, tc.requested) {
			got = append(got, e.String())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: QuotaExceeded = %q, want %q", tc.desc, got, tc.want)
		}
	}
}

func TestReplicasWithin(t *testing.T) {
	for _, tc := range []struct {
		desc               string
		overall, used, per corev1.ResourceList
		want               int64
		limited            bool
	}{
		{"cpu bounds", rl("cpu", "2"), rl("cpu", "500m"), rl("cpu", "500m"), 3, true},
		{"the tighter limit wins", rl("cpu", "10", "memory", "1Gi"), nil, rl("cpu", "1", "memory", "300Mi"), 3, true},
		{"pods bound a request-less workload", rl("pods", "5"), rl("pods", "2"), nil, 3, true},
		{"already over leaves none", rl("cpu", "1"), rl("cpu", "2"), rl("cpu", "100m"), 0, true},
		{"no applicable limit", rl("memory", "1Gi"), nil, rl("cpu", "1"), 0, false},
		{"huge memory does not overflow", rl("memory", "4Ei"), nil, rl("memory", "1Ei"), 4, true},
		{"millicores", rl("requests.cpu", "1"), rl("cpu", "2m"), rl("cpu", "333m"), 2, true},
	} {
		got, limited := ReplicasWithin(tc.overall, tc.used, tc.per)
		if got != tc.want || limited != tc.limited {
			t.Errorf("%s: ReplicasWithin = %d, %v; want %d, %v", tc.desc, got, limited, tc.want, tc.limited)
		}
	}
}

func TestValidateFederatedResourceQuota(t *testing.T) {
	frq := func(overall corev1.ResourceList, assign ...StaticClusterAssignment) *FederatedResourceQuota {
		return &FederatedResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"},
			Spec:       FederatedResourceQuotaSpec{Overall: overall, StaticAssignments: assign},
		}
	}
	for _, tc := range []struct {
		desc string
		q    *FederatedResourceQuota
		want string
	}{
		{"valid", frq(rl("cpu", "4"), StaticClusterAssignment{"east", rl("cpu", "1")}, StaticClusterAssignment{"west", rl("cpu", "3")}), ""},
		{"assignments over overall", frq(rl("cpu", "4"), StaticClusterAssignment{"east", rl("cpu", "3")}, StaticClusterAssignment{"west", rl("cpu", "1001m")}), "spec.overall[cpu]: Invalid value: \"4\": is less than the 4001m"},
		{"negative", frq(rl("memory", "-1Gi")), "spec.overall[memory]: Invalid value: \"-1Gi\": must not be negative"},
		{"unknown name in an assignment", frq(rl("cpu", "4"), StaticClusterAssignment{"east", rl("memory", "1Gi")}), "spec.staticAssignments[0].hard[memory]"},
		{"cluster twice", frq(rl("cpu", "4"), StaticClusterAssignment{"east", rl("cpu", "1")}, StaticClusterAssignment{"east", rl("cpu", "1")}), "spec.staticAssignments[1].clusterName: Duplicate"},
		{"bad cluster name", frq(rl("cpu", "4"), StaticClusterAssignment{"East_1", rl("cpu", "1")}), "spec.staticAssignments[0].clusterName"},
		{"empty overall", frq(nil), "spec.overall: Required"},
		{"bad resource name", frq(rl("cpu/", "1")), "spec.overall[cpu/]"},
		{"no namespace", &FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: FederatedResourceQuotaSpec{Overall: rl("cpu", "1")}}, "metadata.namespace: Required"},
	} {
		got := ValidateFederatedResourceQuota(tc.q).ToAggregate()
		if (got == nil) != (tc.want == "") || (got != nil && !strings.Contains(got.Error(), tc.want)) {
			t.Errorf("%s: ValidateFederatedResourceQuota = %v, want an error containing %q", tc.desc, got, tc.want)
		}
	}
}

// sameResources compares by quantity value, not by format.
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if w, ok := b[name]; !ok || q.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// TestBindingUsageComponents follows Karmada's CalculateResourceUsage for a
// binding with components: every component runs in each of its clusters,
// so each counts its replicas times its request per cluster (pods counted,
// as flotilla counts them for replicas). Without them the binding would
// use nothing of its namespace's quota.
func TestBindingUsageComponents(t *testing.T) {
	req := func(cpu, mem string) *ReplicaRequirements {
		return &ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	spec := &ResourceBindingSpec{
		Components: []Component{{Name: "leader", Replicas: 1, ReplicaRequirements: req("1", "2Gi")}, {Name: "workers", Replicas: 4, ReplicaRequirements: req("2", "4Gi")}, {Name: "idle", Replicas: 2}},
		Clusters:   []TargetCluster{{Name: "east"}, {Name: "west"}},
	}
	got := BindingUsage(spec)
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("18"), corev1.ResourceMemory: resource.MustParse("36Gi"), corev1.ResourcePods: resource.MustParse("14")}
	for name, q := range want {
		if g := got[name]; g.Cmp(q) != 0 {
			t.Errorf("%s: got %s, want %s", name, g.String(), q.String())
		}
	}
	if len(got) != len(want) {
		t.Errorf("usage %v, want %v", got, want)
	}
	spec.Clusters = nil
	if got := BindingUsage(spec); len(got) != 0 {
		t.Errorf("unscheduled: usage %v, want none", got)
	}
}
