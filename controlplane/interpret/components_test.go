package interpret_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// pipelineComponents is a componentResource script of the shape Karmada's
// published ones have (a leader and its workers, each with its own
// replicas and requests): one component from a pod template through the
// kube helper, the other from numbers and quantities in the spec.
const pipelineComponents = `
local kube = require("kube")
function GetComponents(obj)
  local components = {}
  table.insert(components, {
    name = "leader",
    replicas = obj.spec.leader.replicas or 1,
    replicaRequirements = kube.accuratePodRequirements(obj.spec.leader.template),
  })
  local req = {resourceRequest = {cpu = obj.spec.workers.cpu, memory = kube.getResourceQuantity(obj.spec.workers.memory)}}
  if obj.spec.workers.nodeSelector ~= nil then
    req.nodeClaim = {nodeSelector = obj.spec.workers.nodeSelector}
  end
  table.insert(components, {name = "workers", replicas = obj.spec.workers.replicas, replicaRequirements = req})
  return components
end`

const pipeline = `
apiVersion: example.io/v1
kind: Widget
metadata: {name: p, namespace: jobs}
spec:
  leader:
    template:
      spec:
        containers: [{name: l, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  workers: {replicas: 4, cpu: 2, memory: 4Gi, nodeSelector: {pool: batch}}
`

// TestGetComponents follows Karmada's VM.GetComponents: the script's list
// becomes the binding's components, nil is no components, and anything
// else is refused naming the component, while the customization's other
// scripts keep working.
func TestGetComponents(t *testing.T) {
	leader := &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	workers := &api.ReplicaRequirements{NodeClaim: &api.NodeClaim{NodeSelector: map[string]string{"pool": "batch"}},
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}
	cases := []struct {
		name    string
		script  string
		want    []api.Component
		wantErr string
	}{
		{"two components with their own requests", pipelineComponents,
			[]api.Component{{Name: "leader", Replicas: 1, ReplicaRequirements: leader}, {Name: "workers", Replicas: 4, ReplicaRequirements: workers}}, ""},
		{"nil is no components", "function GetComponents(obj) return nil end", nil, ""},
		{"an empty table is no components", "function GetComponents(obj) return {} end", nil, ""},
		{"no requirements", `function GetComponents(obj) return {{name = "a", replicas = 2}} end`,
			[]api.Component{{Name: "a", Replicas: 2}}, ""},
		{"a component without a name", `function GetComponents(obj) return {{name = "a", replicas = 1}, {replicas = 2}} end`,
			nil, `"multi": componentResource: GetComponents returned component [1]: name <nil>`},
		{"a name too long for Karmada's binding", `function GetComponents(obj) return {{name = string.rep("x", 33), replicas = 1}} end`,
			nil, `component [0]: name xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: want a string of 1 to 32 characters`},
		{"two components of one name", `function GetComponents(obj) return {{name = "a", replicas = 1}, {name = "a", replicas = 2}} end`,
			nil, `component [1]: name "a" is also component [0]'s`},
		{"negative replicas", `function GetComponents(obj) return {{name = "a", replicas = -1}} end`,
			nil, `component "a": replicas -1`},
		{"requirements that are not requirements", `function GetComponents(obj) return {{name = "a", replicas = 1, replicaRequirements = {resourceRequest = {cpu = "lots"}}}} end`,
			nil, `component "a": replicaRequirements:`},
		{"a map instead of a list", `function GetComponents(obj) return {a = 1} end`,
			nil, `GetComponents returned a table with keys, want a list of components`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("multi", api.CustomizationRules{
				ComponentResource:    lua(tc.script),
				HealthInterpretation: lua("function InterpretHealth(obj) return obj.spec.workers.replicas > 0 end"),
			})})
			if err != nil {
				t.Fatalf("New refused the customization: %v", err)
			}
			got, ok, err := in.GetComponents(obj(t, pipeline))
			if !ok {
				t.Fatal("GetComponents ok = false for a kind with a componentResource script")
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
			// The customization's other scripts are not lost with it.
			if h, why := in.InterpretHealth(obj(t, pipeline)); h != interpret.Healthy {
				t.Errorf("health = %v (%s), want the customization's answer, healthy", h, why)
			}
		})
	}
	// A kind without the script has no components: GetReplicas decides.
	var none *interpret.Interpreter
	if _, ok, err := none.GetComponents(makeDeployment(3).Obj()); ok || err != nil {
		t.Errorf("built-in Deployment: ok = %v, err = %v; want false, nil", ok, err)
	}
}
