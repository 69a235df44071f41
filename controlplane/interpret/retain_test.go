package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestRetain checks Karmada's retain-replicas rule: with the label, a
// workload that exists in the member leaves spec.replicas out of what is
// applied; without it, or before creation, replicas are applied.
func TestRetain(t *testing.T) {
	labelled := func(kind string) *unstructured.Unstructured {
		o := makeObj(kind).Spec("replicas", 3).Obj()
		o.SetLabels(map[string]string{interpret.RetainReplicasLabel: "true"})
		return o
	}
	observed := makeObj("Deployment").Spec("replicas", 7).Obj()
	cases := []struct {
		name         string
		desired      *unstructured.Unstructured
		observed     *unstructured.Unstructured
		wantReplicas bool
		wantRetains  bool
	}{
		{"labelled Deployment in the member", labelled("Deployment"), observed, false, true},
		{"labelled StatefulSet in the member", labelled("StatefulSet"), observed, false, true},
		{"labelled ReplicaSet in the member", labelled("ReplicaSet"), observed, false, true},
		{"labelled Deployment not yet created", labelled("Deployment"), nil, true, true},
		{"Deployment without the label", makeObj("Deployment").Spec("replicas", 3).Obj(), observed, true, false},
		{"label value other than true", func() *unstructured.Unstructured {
			o := labelled("Deployment")
			o.SetLabels(map[string]string{interpret.RetainReplicasLabel: "yes"})
			return o
		}(), observed, true, false},
		{"Job parallelism is not retained", func() *unstructured.Unstructured {
			o := makeObj("Job").Spec("parallelism", 3).Spec("replicas", 3).Obj()
			o.SetLabels(map[string]string{interpret.RetainReplicasLabel: "true"})
			return o
		}(), observed, true, false},
		{"a custom kind is left alone", func() *unstructured.Unstructured {
			o := makeObjOf("example.com/v1", "Deployment").Spec("replicas", 3).Obj()
			o.SetLabels(map[string]string{interpret.RetainReplicasLabel: "true"})
			return o
		}(), observed, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := interpret.RetainsReplicas(tc.desired); got != tc.wantRetains {
				t.Errorf("RetainsReplicas = %t, want %t", got, tc.wantRetains)
			}
			paths := interpret.Retain(tc.desired, tc.observed)
			_, has, _ := unstructured.NestedFieldNoCopy(tc.desired.Object, "spec", "replicas")
			if has != tc.wantReplicas {
				t.Errorf("spec.replicas present after Retain = %t, want %t", has, tc.wantReplicas)
			}
			var want [][]string
			if !tc.wantReplicas {
				want = [][]string{{"spec", "replicas"}}
			}
			if diff := cmp.Diff(want, paths); diff != "" {
				t.Errorf("retained paths (-want +got):\n%s", diff)
			}
		})
	}
}
