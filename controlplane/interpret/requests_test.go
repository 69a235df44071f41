package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// podRequirementsRIC reads a Widget's replicas and what one replica needs
// through the kube library, as Karmada's published customizations do.
var podRequirementsRIC = widgetRIC("requirements", api.CustomizationRules{ReplicaResource: lua(`
local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end`)})

// TestAddPodTemplateRequest follows Karmada's Resource.AddPodTemplateRequest
// (the pod-requirement helper behind GenerateReplicaRequirements and the
// kube library's accuratePodRequirements): a resource a container limits
// and does not request counts at its limit, as Kubernetes defaults a pod.
// Each case runs the built-in Deployment rule and a Lua customization.
func TestAddPodTemplateRequest(t *testing.T) {
	cases := []struct {
		name string
		pod  string // the pod spec's containers and initContainers, YAML
		want map[string]string
	}{
		{"limits only are the requests",
			`containers: [{name: a, image: a, resources: {limits: {cpu: "1", memory: 1Gi}}}]`,
			map[string]string{"cpu": "1", "memory": "1Gi"}},
		{"a request wins over its limit; a limit fills only what is not requested",
			`containers: [{name: a, image: a, resources: {requests: {cpu: 500m}, limits: {cpu: "2", memory: 2Gi}}}]`,
			map[string]string{"cpu": "500m", "memory": "2Gi"}},
		{"limits-only and requesting containers add up",
			`containers: [{name: a, image: a, resources: {limits: {cpu: "1"}}}, {name: b, image: b, resources: {requests: {cpu: 250m}}}]`,
			map[string]string{"cpu": "1250m"}},
		{"a limits-only init container raises the pod",
			`{containers: [{name: a, image: a, resources: {requests: {cpu: 100m}}}], initContainers: [{name: i, image: i, resources: {limits: {cpu: "3"}}}]}`,
			map[string]string{"cpu": "3"}},
		{"extended resources are taken from limits too",
			`containers: [{name: a, image: a, resources: {limits: {nvidia.com/gpu: "2"}}}]`,
			map[string]string{"nvidia.com/gpu": "2"}},
		{"no requests and no limits need nothing",
			`containers: [{name: a, image: a}]`,
			map[string]string{}},
	}
	in, err := interpret.New([]api.ResourceInterpreterCustomization{podRequirementsRIC})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.pod
			if spec[0] != '{' {
				spec = "{" + spec + "}"
			}
			for _, y := range []string{
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default}\nspec: {replicas: 8, template: {spec: " + spec + "}}\n",
				"apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {replicas: 8, template: {spec: " + spec + "}}\n",
			} {
				tmpl := obj(t, y)
				n, req, err := in.GetReplicas(tmpl)
				if err != nil || n != 8 {
					t.Fatalf("%s: GetReplicas = %d, %v", tmpl.GetKind(), n, err)
				}
				got := map[string]string{}
				if req != nil {
					for name, q := range req.ResourceRequest {
						got[string(name)] = q.String()
					}
				}
				want := map[string]string{}
				for name, s := range tc.want {
					q := resource.MustParse(s)
					want[name] = q.String()
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: resource request (-want +got):\n%s", tmpl.GetKind(), diff)
				}
			}
		})
	}
}
