package interpret

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestBuiltinTableConsistent checks the rows of the kind table against each
// other, so a new row cannot be half filled in.
func TestBuiltinTableConsistent(t *testing.T) {
	native := []schema.GroupKind{
		deploymentKind, replicaSetKind, statefulSetKind, daemonSetKind, jobKind, cronJobKind, podKind,
		serviceKind, ingressKind, pvKind, pvcKind, pdbKind, hpaKind,
	}
	for _, gk := range native {
		k, ok := builtin[gk]
		if !ok {
			t.Errorf("%s: Karmada's native kind is missing from the table", gk)
			continue
		}
		if k.health == nil || k.reflect == nil || k.aggregate == nil {
			t.Errorf("%s: a native kind needs health, reflection and aggregation (health %t, reflect %t, aggregate %t)",
				gk, k.health != nil, k.reflect != nil, k.aggregate != nil)
		}
	}
	for gk, k := range builtin {
		if k.HasReplicas() && len(k.PodSpec) == 0 {
			t.Errorf("%s has replicas but no pod template path", gk)
		}
		if k.ReplicaField != "" && k.SingleReplica {
			t.Errorf("%s has both a replica field and is a single replica", gk)
		}
		if k.Dependencies && len(k.PodSpec) == 0 {
			t.Errorf("%s discovers dependencies but has no pod spec to read them from", gk)
		}
		if len(k.PodSpec) > 0 && !k.Dependencies {
			t.Errorf("%s has pods but does not discover their dependencies", gk)
		}
		if len(k.PodSpec) > 0 && k.PodSpec[len(k.PodSpec)-1] != "spec" {
			t.Errorf("%s: pod spec path %v does not end in a spec", gk, k.PodSpec)
		}
		if len(k.retain) > 0 && k.ReplicaField != "replicas" {
			t.Errorf("%s retains replicas but has no spec.replicas", gk)
		}
		if k.ReplicaField == "replicas" && len(k.retain) == 0 {
			t.Errorf("%s has spec.replicas but does not honour the retain-replicas label", gk)
		}
		if k.aggregate != nil && k.reflect == nil {
			t.Errorf("%s aggregates a status it does not reflect", gk)
		}
	}
}

// TestReplicaFieldRoundTrip revises every kind with a replica field and
// reads the replicas back through GetReplicas, so the two operations agree
// on the field.
func TestReplicaFieldRoundTrip(t *testing.T) {
	for gk, k := range builtin {
		if k.ReplicaField == "" {
			continue
		}
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetGroupVersionKind(gk.WithVersion("v1"))
		if err := unstructured.SetNestedField(obj.Object, int64(9), "spec", k.ReplicaField); err != nil {
			t.Fatal(err)
		}
		if err := ReviseReplica(obj, 4); err != nil {
			t.Fatalf("%s: %v", gk, err)
		}
		got, req, err := GetReplicas(obj)
		if err != nil || got != 4 || req == nil {
			t.Errorf("%s: GetReplicas after ReviseReplica(4) = %d, %v, %v; want 4 with requirements", gk, got, req, err)
		}
	}
}

// TestPodSpecPointer checks the JSON pointers the overriders use.
func TestPodSpecPointer(t *testing.T) {
	cases := map[schema.GroupKind]string{
		deploymentKind: "/spec/template/spec",
		cronJobKind:    "/spec/jobTemplate/spec/template/spec",
		podKind:        "/spec",
		serviceKind:    "",
		{Group: "example.com", Kind: "Deployment"}: "",
	}
	for gk, want := range cases {
		if got := PodSpecPointer(gk); got != want {
			t.Errorf("PodSpecPointer(%s) = %q, want %q", gk, got, want)
		}
	}
	if !slices.Equal(DependencyKinds, []string{"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"}) {
		t.Errorf("DependencyKinds = %v", DependencyKinds)
	}
}
