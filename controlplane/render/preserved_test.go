package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestPreservedLabels follows Karmada's injectReservedLabelState
// (pkg/controllers/binding/common.go).
func TestPreservedLabels(t *testing.T) {
	state := map[string]string{"failover.example.com/job-id": "42"}
	task := func(mode api.PurgeMode, before ...string) api.GracefulEvictionTask {
		return api.GracefulEvictionTask{FromCluster: "east", PurgeMode: mode, PreservedLabelState: state, ClustersBeforeFailover: before}
	}
	on := func(clusters ...string) []api.TargetCluster {
		var out []api.TargetCluster
		for _, c := range clusters {
			out = append(out, api.TargetCluster{Name: c, Replicas: 1})
		}
		return out
	}
	cases := map[string]struct {
		spec    api.ResourceBindingSpec
		cluster string
		want    map[string]string
	}{
		"moved to one new cluster, Directly: injected": {
			spec: api.ResourceBindingSpec{Clusters: on("west"), GracefulEvictionTasks: []api.GracefulEvictionTask{task(api.PurgeModeDirectly, "east")}}, cluster: "west", want: state,
		},
		"the deprecated Immediately counts as Directly": {
			spec: api.ResourceBindingSpec{Clusters: on("west"), GracefulEvictionTasks: []api.GracefulEvictionTask{task(api.PurgeModeImmediately, "east")}}, cluster: "west", want: state,
		},
		"Gracefully: not injected": {
			spec: api.ResourceBindingSpec{Clusters: on("west"), GracefulEvictionTasks: []api.GracefulEvictionTask{task(api.PurgeModeGracefully, "east")}}, cluster: "west",
		},
		"more than one cluster: not injected": {
			spec: api.ResourceBindingSpec{Clusters: on("south", "west"), GracefulEvictionTasks: []api.GracefulEvictionTask{task(api.PurgeModeDirectly, "east")}}, cluster: "west",
		},
		"a cluster it ran in before: not injected": {
			spec: api.ResourceBindingSpec{Clusters: on("west"), GracefulEvictionTasks: []api.GracefulEvictionTask{task(api.PurgeModeDirectly, "east", "west")}}, cluster: "west",
		},
		"the latest task counts": {
			spec: api.ResourceBindingSpec{Clusters: on("west"), GracefulEvictionTasks: []api.GracefulEvictionTask{
				task(api.PurgeModeDirectly, "east"), {FromCluster: "south", PurgeMode: api.PurgeModeGracefully}}}, cluster: "west",
		},
		"no task: not injected": {spec: api.ResourceBindingSpec{Clusters: on("west")}, cluster: "west"},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, PreservedLabels(&tc.spec, tc.cluster)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestRenderTargetLabels: preserved labels land after the overrides and
// cannot replace flotilla's ownership labels.
func TestRenderTargetLabels(t *testing.T) {
	tmpl := apitest.MakeDeployment("web", "prod").Replicas(2).Label("app", "web").Obj()
	in := divided(tmpl, targets("west", 2))
	in.Clusters[0].Labels = map[string]string{"job-id": "42", LabelFleet: "other", "app": "restored"}
	w := mustRender(t, in)["west"]
	got := w.Object.GetLabels()
	if got["job-id"] != "42" || got["app"] != "restored" {
		t.Errorf("preserved labels missing: %v", got)
	}
	if got[LabelFleet] != "prod" {
		t.Errorf("a preserved label replaced the fleet label: %v", got)
	}
	if h, err := RenderedHash(w.Object); err != nil || h != w.Hash {
		t.Errorf("rendered hash %q does not cover the preserved labels (%q, %v)", w.Hash, h, err)
	}
}
