package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fragmentedClusters are two Cluster status documents: frag's summed free
// cores (16 allocatable, 9.75 allocated) hold 6 one-core replicas, but
// its resource models count one node under 1 free core and three under 2,
// which hold 3; roomy declares no models and has 3 cores free.
const fragmentedClusters = `
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: frag}
spec:
  resourceModels:
  - grade: 0
    ranges: [{name: cpu, min: "0", max: "1"}]
  - grade: 1
    ranges: [{name: cpu, min: "1", max: "2"}]
  - grade: 2
    ranges: [{name: cpu, min: "2", max: "4"}]
status:
  conditions: [{type: Ready, status: "True", reason: ClusterReady, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  resourceSummary:
    allocatable: {cpu: "16", pods: "440"}
    allocated: {cpu: 9750m, pods: "4"}
    allocatableModelings: [{grade: 0, count: 1}, {grade: 1, count: 3}, {grade: 2, count: 0}]
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: roomy}
status:
  conditions: [{type: Ready, status: "True", reason: ClusterReady, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  resourceSummary:
    allocatable: {cpu: "3", pods: "110"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: "1"}}}]
`

// TestPreviewPerNodeByModels: preview reads no member, so what its Cluster
// status documents say of the nodes is their resource models; a cluster
// whose graded nodes hold fewer replicas than its summed free resources
// gets what its nodes hold, and the reason says so with both figures.
func TestPreviewPerNodeByModels(t *testing.T) {
	code, stdout, stderr := runPreview(t, fragmentedClusters, "-f", "-", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	r := decodeOutput(t, stdout).Results[0]
	if diff := cmp.Diff([]PreviewPlacement{{Cluster: "frag", Replicas: 3}, {Cluster: "roomy", Replicas: 3}}, r.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	want := map[string]string{"frag": "per-node fit by resource models: room for 3; cluster-wide free would allow 6"}
	if diff := cmp.Diff(want, r.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}
