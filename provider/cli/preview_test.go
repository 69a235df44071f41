package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func runPreview(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Preview(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func decodeOutput(t *testing.T, s string) PreviewOutput {
	t.Helper()
	var out PreviewOutput
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("stdout is not valid JSON: %v\n%s", err, s)
	}
	return out
}

// TestPreviewKarmadaSample runs the Karmada-shaped sample in examples/preview
// unchanged and pins the documented JSON output with a golden file.
func TestPreviewKarmadaSample(t *testing.T) {
	code, stdout, stderr := runPreview(t, "", "-f", "../../examples/preview", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	out := decodeOutput(t, stdout)
	if len(out.Results) != 1 {
		t.Fatalf("want 1 result, got %d", len(out.Results))
	}
	r := out.Results[0]
	if diff := cmp.Diff([]PreviewPlacement{{Cluster: "member1", Replicas: 1}, {Cluster: "member2", Replicas: 1}}, r.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	images := map[string]string{}
	for cluster, obj := range r.Rendered {
		containers := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		images[cluster] = containers[0].(map[string]any)["image"].(string)
	}
	if diff := cmp.Diff(map[string]string{"member1": "nginx:1.27", "member2": "registry.eu.example.com/nginx:1.27"}, images); diff != "" {
		t.Errorf("images per cluster (-want +got):\n%s", diff)
	}
	golden := filepath.Join("testdata", "karmada-sample.json")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), stdout); diff != "" {
		t.Errorf("JSON output changed; it is a documented interface (-want +got):\n%s", diff)
	}
}

const twoClusters = `
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east}
spec: {region: us-east}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: dr}
spec:
  region: us-west
  taints: [{key: dedicated, value: dr, effect: NoSchedule}]
---
`

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:1"}]}
---
`

// claimPolicies are low (priority 1) and high (priority 5, by name, with
// the given preemption and Lazy activation) selecting Deployment web.
func claimPolicies(preemption string) string {
	return `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: low, namespace: default}
spec:
  priority: 1
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [east]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: high, namespace: default}
spec:
  priority: 5
  preemption: ` + preemption + `
  activationPreference: Lazy
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [east]}}
---
`
}

// previousClaimBinding is Karmada's binding of web, claimed by low.
const previousClaimBinding = `
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: web-deployment
  namespace: default
  annotations:
    propagationpolicy.karmada.io/name: low
    propagationpolicy.karmada.io/namespace: default
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: web}
  replicas: 3
  clusters: [{name: east, replicas: 3}]
`

func TestPreviewOutcomes(t *testing.T) {
	cases := map[string]struct {
		input      string
		wantCode   int
		check      func(t *testing.T, out PreviewOutput)
		wantStderr string
	}{
		"affinity terms fall back to the DR group when primary is unschedulable": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinities:
      - affinityName: primary
        clusterNames: [missing]
      - affinityName: backup
        clusterNames: [east]
`,
			wantCode: ExitOK,
			check: func(t *testing.T, out PreviewOutput) {
				r := out.Results[0]
				if r.AffinityTerm != "backup" || r.Error != "" {
					t.Errorf("want term backup and no error, got term %q error %q", r.AffinityTerm, r.Error)
				}
				if diff := cmp.Diff([]PreviewPlacement{{Cluster: "east", Replicas: 3}}, r.Placement); diff != "" {
					t.Errorf("placement (-want +got):\n%s", diff)
				}
			},
		},
		"untolerated taint is unschedulable with a per-cluster reason": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [dr]}}
`,
			wantCode:   ExitUnschedulable,
			wantStderr: "could not be scheduled",
			check: func(t *testing.T, out PreviewOutput) {
				r := out.Results[0]
				if r.Error == "" || len(r.Placement) != 0 {
					t.Errorf("want an error and no placement, got error %q placement %v", r.Error, r.Placement)
				}
				if !strings.Contains(r.Reasons["dr"], "taint") {
					t.Errorf("reason for dr should name the taint, got %q", r.Reasons["dr"])
				}
			},
		},
		"a typo in clusterNames names the policy, the field and the closest cluster": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [esat]}}
`,
			wantCode:   ExitUnschedulable,
			wantStderr: "could not be scheduled",
			check: func(t *testing.T, out PreviewOutput) {
				if r := out.Results[0]; !strings.Contains(r.Error, `PropagationPolicy default/web: spec.placement.clusterAffinity.clusterNames[0] "esat" is not a cluster of the fleet (the closest is "east")`) {
					t.Errorf("error %q should name the unknown cluster and the closest", r.Error)
				}
			},
		},
		"a FederatedResourceQuota refuses a template that would go over, with the numbers": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: default, namespace: default}
spec: {overall: {pods: "2"}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [east]}}
`,
			wantCode:   ExitUnschedulable,
			wantStderr: "could not be scheduled",
			check: func(t *testing.T, out PreviewOutput) {
				r := out.Results[0]
				if !strings.Contains(r.Error, "would exceed FederatedResourceQuota default/default: pods: 3 requested, 0 used of 2") || len(r.Placement) != 0 {
					t.Errorf("want the quota's numbers and no placement, got error %q placement %v", r.Error, r.Placement)
				}
			},
		},
		"a template no policy claims is listed with an empty placement": {
			input:    twoClusters + webDeployment,
			wantCode: ExitOK,
			check: func(t *testing.T, out PreviewOutput) {
				r := out.Results[0]
				if r.Policy != nil || r.Error != "" || len(r.Placement) != 0 || r.Placement == nil {
					t.Errorf("want no policy, no error, empty (not null) placement; got %+v", r)
				}
			},
		},
		"a previous binding's claim is sticky against a higher priority": {
			input:    twoClusters + webDeployment + claimPolicies("Never") + previousClaimBinding,
			wantCode: ExitOK,
			check: func(t *testing.T, out PreviewOutput) {
				if p := out.Results[0].Policy; p == nil || p.Name != "low" {
					t.Errorf("want web held by low (Karmada's claim annotations on the binding), got %+v", p)
				}
			},
		},
		"preemption Always with a higher priority takes a claimed template": {
			input:    twoClusters + webDeployment + claimPolicies("Always") + previousClaimBinding,
			wantCode: ExitOK,
			check: func(t *testing.T, out PreviewOutput) {
				if p := out.Results[0].Policy; p == nil || p.Name != "high" {
					t.Errorf("want web preempted by high, got %+v", p)
				}
			},
		},
		"placement.workloadAffinity is refused by name": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {workloadAffinity: {antiAffinity: {groupByLabelKey: app.group}}}
`,
			wantCode:   ExitBadInput,
			wantStderr: "spec.placement.workloadAffinity: Forbidden: workloadAffinity is not supported",
			check:      func(*testing.T, PreviewOutput) {},
		},
		"association: true is refused by name, naming the policy": {
			input: twoClusters + webDeployment + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  association: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
`,
			wantCode:   ExitBadInput,
			wantStderr: "PropagationPolicy default/web: spec.association: Forbidden: association is deprecated in Karmada and has no effect there or here; set propagateDeps: true",
			check:      func(*testing.T, PreviewOutput) {},
		},
		"propagateDeps carries the referenced ConfigMap to the workload's clusters": {
			input: twoClusters + `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: default}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1", envFrom: [{configMapRef: {name: web-config}}]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [east]}}
`,
			wantCode: ExitOK,
			check: func(t *testing.T, out PreviewOutput) {
				cm := out.Results[0]
				if diff := cmp.Diff([]PreviewPlacement{{Cluster: "east", Replicas: 0}}, cm.Placement); diff != "" {
					t.Errorf("ConfigMap placement (-want +got):\n%s", diff)
				}
				if len(cm.RequiredBy) != 1 || cm.RequiredBy[0].Name != "web" {
					t.Errorf("ConfigMap should be required by web, got %+v", cm.RequiredBy)
				}
				if _, ok := cm.Rendered["east"]; !ok {
					t.Errorf("ConfigMap not rendered for east")
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runPreview(t, tc.input, "-f", "-", "-o", "json")
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, stderr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q should contain %q", stderr, tc.wantStderr)
			}
			tc.check(t, decodeOutput(t, stdout))
		})
	}
}

func TestPreviewBadInput(t *testing.T) {
	cases := map[string]struct {
		input string
		want  []string
	}{
		"unknown field names file, document and field path": {
			input: twoClusters + `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {replicaScheduling: {replicaSchedulingType: Divided, bogus: 1}}
`,
			want: []string{"-:3", "PropagationPolicy default/web", "bogus"},
		},
		"invalid value names the field": {
			input: `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [a]}, weight: 0}]}
`,
			want: []string{"-:1", "staticWeightList[0].weight"},
		},
		"unknown Karmada kind": {
			input: "apiVersion: policy.karmada.io/v1alpha1\nkind: Propagationpolicy\nmetadata: {name: x}\n",
			want:  []string{"-:1", "Propagationpolicy"},
		},
		"broken YAML": {
			input: "apiVersion: v1\nkind: [\n",
			want:  []string{"-:1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runPreview(t, tc.input, "-f", "-", "-o", "json")
			if code != ExitBadInput {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitBadInput, stderr)
			}
			out := decodeOutput(t, stdout)
			if len(out.Results) != 0 || out.Error == "" {
				t.Errorf("want no results and an error, got %+v", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.Error, w) {
					t.Errorf("error %q should contain %q", out.Error, w)
				}
			}
		})
	}
}

func TestPreviewTable(t *testing.T) {
	code, stdout, stderr := runPreview(t, "", "-f", "../../examples/preview/clusters.yaml", "-f", "../../examples/preview/nginx.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	for _, want := range []string{
		"Deployment default/nginx  PropagationPolicy default/nginx-propagation",
		"member1=1,member2=1",
		"# Deployment default/nginx -> member2",
		`"image": "registry.eu.example.com/nginx:1.27"`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table output should contain %q:\n%s", want, stdout)
		}
	}
}
