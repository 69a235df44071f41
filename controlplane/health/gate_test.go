package health_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
)

func TestGated(t *testing.T) {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	// surge is a 1-replica Deployment whose new pod is broken: Karmada's
	// rule calls it Healthy, its rollout is not complete.
	surge := makeItem("member1").Status("replicas", 2, "updatedReplicas", 1, "availableReplicas", 1, "observedGeneration", 1)
	done := makeItem("member1").Status("replicas", 1, "updatedReplicas", 1, "availableReplicas", 1, "observedGeneration", 1)
	type view struct {
		Health  health.Health
		Message string
	}
	cases := []struct {
		name string
		cs   health.ClusterStatus
		// live is the member's live object; nil judges the reported
		// status (health.Reported), as continuous mode does.
		live *unstructured.Unstructured
		want view
	}{
		{
			name: "live object of the surge case",
			cs:   makeItem("member1").Obj(),
			live: makeDeployment(1).Observed().Status("replicas", 2, "updatedReplicas", 1, "availableReplicas", 1).Obj(),
			want: view{health.Unhealthy, "rollout not complete: 1 old replica(s) pending"},
		},
		{
			name: "reported status of the surge case",
			cs:   surge.Obj(),
			want: view{health.Unhealthy, "rollout not complete: 1 old replica(s) pending"},
		},
		{
			name: "reported status of a newer generation not observed yet",
			cs:   makeItem("member1").Generations(2, 1, 2).Status("replicas", 1, "updatedReplicas", 1, "availableReplicas", 1, "observedGeneration", 1).Obj(),
			want: view{health.Unhealthy, "rollout not complete: waiting for the controller to observe generation 2 (observed 1)"},
		},
		{
			name: "reported status of a complete rollout",
			cs:   done.Obj(),
			want: view{health.Healthy, "ok"},
		},
		{
			name: "an unhealthy member keeps its own reason",
			cs:   makeItem("member1").Unhealthy("0/1 replicas available").Obj(),
			want: view{health.Unhealthy, "0/1 replicas available"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.live
			if obj == nil {
				obj = health.Reported(deployment, tc.cs)
			}
			got := health.Gated(tc.cs, obj)
			if diff := cmp.Diff(tc.want, view{got.Health, got.Message}); diff != "" {
				t.Errorf("Gated (-want +got):\n%s", diff)
			}
		})
	}
}
