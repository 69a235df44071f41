package render

import (
	"fmt"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// benchPolicy is a namespaced policy with an image rule for half the
// clusters and command and label rules for all.
func benchPolicy() *api.OverridePolicy {
	return apitest.MakeOverridePolicy("web", "default").SelectName("apps/v1", "Deployment", "web").
		Image(apitest.MakeAffinity().Names("a", "c", "e", "g", "i").Obj(), api.Registry, api.OverriderOpReplace, "registry.eu.example.com").
		Rule(nil, api.Overriders{
			CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpAdd, Value: []string{"--region=eu"}}},
			LabelsOverrider:  []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"tier": "prod"}}},
		}).Obj()
}

// benchClusterPolicy is a cluster-wide policy with a plaintext rule.
func benchClusterPolicy() *api.ClusterOverridePolicy {
	return apitest.MakeClusterOverridePolicy("global").SelectKind("apps/v1", "Deployment").
		Plaintext(nil, "/spec/template/spec/nodeSelector", api.OverriderOpAdd, `{"pool":"general"}`).ClusterObj()
}

// BenchmarkRender renders one Deployment for 10 clusters with 2 override
// policies.
func BenchmarkRender(b *testing.B) {
	tmpl := apitest.MakeDeployment("web", "default").Replicas(30).Image("web:1.4").Container("sidecar", "envoy:v1.30").Obj()
	var clusters []Target
	for i := 0; i < 10; i++ {
		clusters = append(clusters, Target{Cluster: apitest.MakeCluster(fmt.Sprintf("%c", 'a'+i)).Obj(), Replicas: 3})
	}
	in := divided(tmpl, clusters)
	in.Overrides = policy.MatchOverrides(tmpl, []api.OverridePolicy{*benchPolicy()}, []api.ClusterOverridePolicy{*benchClusterPolicy()})
	b.ReportAllocs()
	for b.Loop() {
		works, err := Render(in)
		if err != nil || len(works) != 10 {
			b.Fatalf("Render = %d works, %v", len(works), err)
		}
	}
}
