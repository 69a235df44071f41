package cli

import (
	"os"
	"strings"
	"testing"
)

// TestPreviewRefusesAutoscaling: a FederatedHPA or CronFederatedHPA, in
// Karmada's group as a Karmada user brings it or in flotilla's, is refused
// with a message naming continuous mode and exit code 2, never planned as
// an ordinary template that a member would receive; the Deployment beside
// it is still planned.
func TestPreviewRefusesAutoscaling(t *testing.T) {
	clusters, err := os.ReadFile("../../examples/preview/clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const in = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA}
  - {apiVersion: autoscaling.flotilla.io/v1alpha1, kind: CronFederatedHPA}
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
---
apiVersion: autoscaling.flotilla.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  rules: [{name: peak, schedule: "0 8 * * *", targetReplicas: 6}]
`
	code, stdout, stderr := runPreview(t, string(clusters)+"\n---\n"+in, "-f", "-", "-o", "json")
	if code != ExitBadInput || !strings.Contains(stderr, "FederatedHPA and CronFederatedHPA act only in continuous mode") ||
		strings.Contains(stderr, "a claiming policy sets a field") {
		t.Fatalf("exit %d, stderr %q; want 2 and the continuous mode line alone", code, stderr)
	}
	got := map[string]PreviewResult{}
	for _, r := range decodeOutput(t, stdout).Results {
		got[r.Template.Kind] = r
	}
	for _, kind := range []string{"FederatedHPA", "CronFederatedHPA"} {
		r := got[kind]
		if !r.Refused || len(r.Placement) != 0 || len(r.Rendered) != 0 ||
			!strings.HasPrefix(r.Error, "FederatedHPA and CronFederatedHPA scale a template between runs") ||
			!strings.Contains(r.Error, "only the continuous control plane does") {
			t.Errorf("%s: %+v, want refused with no placement, naming continuous mode", kind, r)
		}
	}
	if d := got["Deployment"]; d.Error != "" || len(d.Placement) != 1 || d.Placement[0].Cluster != "member1" {
		t.Errorf("the Deployment beside them: %+v, want placed on member1", d)
	}
	_, table, _ := runPreview(t, string(clusters)+"\n---\n"+in, "-f", "-")
	if !strings.Contains(table, "# FederatedHPA shop/web: FederatedHPA and CronFederatedHPA scale") {
		t.Errorf("table output lacks the refusal:\n%s", table)
	}
}
