package plan

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// requesting is a Deployment of team-a whose pods request cpu each.
func requesting(t *testing.T, name string, replicas int32, cpu string) *unstructured.Unstructured {
	t.Helper()
	d := apitest.MakeDeployment(name, "team-a").Replicas(replicas).Image("nginx:1.27").Obj()
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": cpu}}
	if err := unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPlanRespectsQuotas: templates are weighed in order against their
// namespace's FederatedResourceQuota, so the one that would take the
// namespace over is refused with the numbers and gets no placement; a
// static assignment caps what dynamic division gives its cluster; another
// namespace is not limited.
func TestPlanRespectsQuotas(t *testing.T) {
	clusters := []api.Cluster{
		*apitest.MakeCluster("east").Ready().Allocatable(corev1.ResourcePods, "100").Allocatable(corev1.ResourceCPU, "64").Obj(),
		*apitest.MakeCluster("west").Ready().Allocatable(corev1.ResourcePods, "3").Allocatable(corev1.ResourceCPU, "64").Obj(),
	}
	quota := api.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"},
		Spec: api.FederatedResourceQuotaSpec{
			Overall:           corev1.ResourceList{"requests.cpu": resource.MustParse("3")},
			StaticAssignments: []api.StaticClusterAssignment{{ClusterName: "east", Hard: corev1.ResourceList{"requests.cpu": resource.MustParse("500m")}}},
		},
	}
	f := Fleet{
		Name:     "prod",
		Clusters: clusters,
		PropagationPolicies: []api.PropagationPolicy{
			*apitest.MakePropagationPolicy("all", "team-a").SelectKind("apps/v1", "Deployment").DynamicWeight().Obj(),
			*apitest.MakePropagationPolicy("all", "team-b").SelectKind("apps/v1", "Deployment").DynamicWeight().Obj(),
		},
		Quotas: []api.FederatedResourceQuota{quota},
	}
	other := requesting(t, "other", 2, "1")
	other.SetNamespace("team-b")
	results := Plan(f, []*unstructured.Unstructured{
		requesting(t, "web", 5, "250m"),
		requesting(t, "big", 2, "1"),
		other,
	})
	web, big, unlimited := results[0], results[1], results[2]
	if web.Err != nil {
		t.Fatalf("web: %v", web.Err)
	}
	// East's 500m assignment holds two 250m replicas (its pods would take
	// all five), west's pods the other three.
	if got := placementOf(web); got["east"] != 2 || got["west"] != 3 {
		t.Errorf("web placement %v, want east 2 (its static assignment) and west 3", got)
	}
	want := "the template's replicas would exceed FederatedResourceQuota team-a/team-a: requests.cpu: 2 requested, 1250m used of 3"
	if big.Err == nil || !strings.Contains(big.Err.Error(), want) || len(big.Placement) != 0 {
		t.Errorf("big: err %v placement %v, want refused with %q", big.Err, big.Placement, want)
	}
	if unlimited.Err != nil || len(unlimited.Placement) == 0 {
		t.Errorf("another namespace: err %v placement %v, want it planned", unlimited.Err, unlimited.Placement)
	}
}
