// Package benchfleet builds the fleet and the bindings the scheduler is
// measured on: the shape of issue 23, which flotilla's benchmarks schedule
// in process and which cmd/schedfixture writes as Karmada JSON, so that
// Karmada's scheduler core can be measured on the very same input
// (scripts/bench-karmada.sh).
//
// Like the scheduler it belongs to the pure core: it builds values and
// does no I/O.
package benchfleet

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// Sizes are the fleet sizes compared side by side with Karmada.
var Sizes = []int{100, 1000, 5000}

// Clusters builds the fleet of issue 23: five regions with one zone each,
// two providers, a "tier=gold" label on 90% of clusters, a NoSchedule
// taint on every 20th cluster, the Deployment API missing on every 25th,
// and varied allocatable and allocated CPU, memory and pods.
func Clusters(n int) []*api.Cluster {
	out := make([]*api.Cluster, n)
	for i := 0; i < n; i++ {
		region := "region-" + strconv.Itoa(i%5)
		w := apitest.MakeCluster(fmt.Sprintf("member-%05d", i)).
			Region(region).Zones(region+"-a").
			Provider([]string{"aws", "gcp"}[i%2]).
			Ready().
			Allocatable(corev1.ResourcePods, strconv.Itoa(200+i%7*100)).
			Allocatable(corev1.ResourceCPU, strconv.Itoa(32+i%97)).
			Allocatable(corev1.ResourceMemory, strconv.Itoa(128+i%13*32)+"Gi").
			Allocated(corev1.ResourcePods, strconv.Itoa(i%150)).
			Allocated(corev1.ResourceCPU, strconv.Itoa(i%29)+"500m").
			Allocated(corev1.ResourceMemory, strconv.Itoa(i%61)+"Gi")
		if i%10 != 9 {
			w.Label("tier", "gold")
		}
		if i%20 == 19 {
			w.Taint("dedicated", "batch", corev1.TaintEffectNoSchedule)
		}
		if i%25 == 24 {
			w.APIs("v1/ConfigMap", "v1/Service", "apps/v1/StatefulSet")
		} else {
			w.APIs("v1/ConfigMap", "v1/Service", "apps/v1/StatefulSet", "apps/v1/Deployment")
		}
		out[i] = w.Obj()
	}
	return out
}

// Case is one binding to schedule, named by its strategy.
type Case struct {
	// Name is the strategy, as benchmark names show it.
	Name string `json:"name"`
	// Binding is the template to schedule, with its policy's placement in
	// spec.placement.
	Binding api.ResourceBinding `json:"binding"`
}

// UID is the template's UID: its FNV-1a hash is even, so Webster ties go
// to the ascending cluster name.
const UID types.UID = "uid-2"

// Cases are the five strategies of issue 23, each selecting the clusters
// by the "tier=gold" label, for a Deployment of 1,000 replicas requesting
// 250m CPU and 512Mi each: Duplicated, static weights by region (with
// spread constraints, which Karmada ignores for static weights), dynamic
// weights, Aggregated, and dynamic weights spread over 2–3 regions and
// 3–12 clusters.
func Cases() []Case {
	gold := apitest.MakeAffinity().Label("tier", "gold").Obj()
	policy := func() *apitest.PropagationPolicyWrapper { return apitest.MakePropagationPolicy("p", "default") }
	static := policy().Affinity(gold)
	for r := 0; r < 5; r++ {
		static.StaticWeight(*apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn,
			"region-"+strconv.Itoa(r)).Obj(), int64(r+1))
	}
	spread := func(w *apitest.PropagationPolicyWrapper) *apitest.PropagationPolicyWrapper {
		return w.Spread(api.SpreadByFieldRegion, 2, 3).Spread(api.SpreadByFieldCluster, 3, 12)
	}
	policies := []struct {
		name string
		w    *apitest.PropagationPolicyWrapper
	}{
		{"Duplicated", policy().Duplicated().Affinity(gold)},
		{"StaticWeightedSpread", spread(static)},
		{"DynamicWeighted", policy().Affinity(gold).DynamicWeight()},
		{"Aggregated", policy().Affinity(gold).Divided(api.ReplicaDivisionPreferenceAggregated)},
		{"DynamicWeightedSpread", spread(policy().Affinity(gold).DynamicWeight())},
	}
	out := make([]Case, len(policies))
	for i, p := range policies {
		placement := p.w.Spec().Placement
		out[i] = Case{Name: p.name, Binding: api.ResourceBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "default"},
			Spec: api.ResourceBindingSpec{
				Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default",
					Name: "web", UID: UID},
				Replicas: 1000,
				ReplicaRequirements: &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("250m"),
					corev1.ResourceMemory: resource.MustParse("512Mi"),
				}},
				Placement: &placement,
			},
		}}
	}
	return out
}
