package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rolloutInput is three clusters (member3 is the canary ring), a policy
// with a rollout (rolloutSpec is its spec.rollout, indented for it) and a
// Deployment, as Karmada YAML.
func rolloutInput(t *testing.T, rolloutSpec string) string {
	t.Helper()
	dir := t.TempDir()
	var clusters strings.Builder
	for _, c := range []struct{ name, labels string }{{"member1", "{}"}, {"member2", "{}"}, {"member3", "{ring: canary}"}} {
		clusters.WriteString(`---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: ` + c.name + `, labels: ` + c.labels + `}
spec: {syncMode: Push, apiEndpoint: "https://` + c.name + `.example.com:6443"}
status:
  conditions: [{type: Ready, status: "True", reason: ClusterReady, message: ready, lastTransitionTime: "2026-01-01T00:00:00Z"}]
`)
	}
	files := map[string]string{
		"clusters.yaml": clusters.String(),
		"policy.yaml": `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  rollout:
` + rolloutSpec,
		"web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPreviewRollout: preview shows which clusters are in which stage, in
// JSON and in the table, and a bad rollout is refused naming the field and
// the policy.
func TestPreviewRollout(t *testing.T) {
	dir := rolloutInput(t, `    onGateFailure: Rollback
    stages:
      - name: canary
        clusterAffinity: {labelSelector: {matchLabels: {ring: canary}}}
        gate: {bakeSeconds: 30}
      - name: first
        clusterAffinity: {clusterNames: [member1]}
`)
	code, stdout, stderr := runPreview(t, "", "-f", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	out := decodeOutput(t, stdout)
	if len(out.Results) != 1 {
		t.Fatalf("want 1 result, got %d", len(out.Results))
	}
	want := &PreviewRollout{OnGateFailure: "Rollback", Stages: []PreviewStage{
		{Name: "canary", Clusters: []string{"member3"}, Batches: [][]string{{"member3"}}, BakeSeconds: 30, TimeoutSeconds: 600},
		{Name: "first", Clusters: []string{"member1"}, Batches: [][]string{{"member1"}}, TimeoutSeconds: 600},
		{Name: "remaining", Clusters: []string{"member2"}, Batches: [][]string{{"member2"}}, TimeoutSeconds: 600},
	}}
	if diff := cmp.Diff(want, out.Results[0].Rollout); diff != "" {
		t.Errorf("rollout (-want +got):\n%s", diff)
	}

	code, stdout, stderr = runPreview(t, "", "-f", dir)
	if code != ExitOK {
		t.Fatalf("table: exit %d, stderr: %s", code, stderr)
	}
	for _, line := range []string{
		"# Deployment default/web rollout (on gate failure: Rollback)",
		"#   1. canary: member3 (gate: bake 30s, at most 0 unhealthy, timeout 600s)",
		"#   2. first: member1 (gate: bake 0s, at most 0 unhealthy, timeout 600s)",
		"#   3. remaining: member2 (gate: bake 0s, at most 0 unhealthy, timeout 600s)",
	} {
		if !strings.Contains(stdout, line+"\n") {
			t.Errorf("table output lacks %q:\n%s", line, stdout)
		}
	}

	batched := rolloutInput(t, `    stages:
      - name: all
        maxConcurrentClusters: 2
`)
	code, stdout, stderr = runPreview(t, "", "-f", batched)
	if code != ExitOK || !strings.Contains(stdout, "#   1. all: member1, member2 | member3 (gate: bake 0s, at most 0 unhealthy, timeout 600s)\n") {
		t.Errorf("batches: exit %d, stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}

	bad := rolloutInput(t, `    stages:
      - name: wave
      - name: wave
        gate: {timeoutSeconds: 0}
`)
	code, _, stderr = runPreview(t, "", "-f", bad)
	if code != ExitBadInput {
		t.Fatalf("bad rollout: exit %d, want %d; stderr: %s", code, ExitBadInput, stderr)
	}
	for _, want := range []string{"PropagationPolicy", "web", "spec.rollout.stages[0].clusterAffinity", `spec.rollout.stages[1].name: Duplicate value: "wave"`, "spec.rollout.stages[1].gate.timeoutSeconds"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("bad rollout: stderr lacks %q:\n%s", want, stderr)
		}
	}
}
