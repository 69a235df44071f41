package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ownCluster is a second schedulable cluster for the dispatch cases.
const ownCluster = `
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west}
spec: {region: eu-west}
---
`

// TestPreviewDispatchFields runs preview over the policy fields it honours
// (suspension: the held-back clusters are marked and still rendered) and
// refuses (schedulerName naming another scheduler, a dependentOverrides
// entry not in the input: exit 2, the policy and field named).
func TestPreviewDispatchFields(t *testing.T) {
	policy := func(extra string) string {
		return `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [east, west]}}
` + extra
	}
	cases := map[string]struct {
		input     string
		wantCode  int
		placement []PreviewPlacement
		wantErr   []string
	}{
		"dispatchingOnClusters marks the named cluster": {
			input:     twoClusters + ownCluster + webDeployment + policy("  suspension: {dispatchingOnClusters: {clusterNames: [west]}}\n"),
			placement: []PreviewPlacement{{Cluster: "east", Replicas: 3}, {Cluster: "west", Replicas: 3, Suspended: true}},
		},
		"dispatching: true marks every cluster": {
			input:     twoClusters + ownCluster + webDeployment + policy("  suspension: {dispatching: true}\n"),
			placement: []PreviewPlacement{{Cluster: "east", Replicas: 3, Suspended: true}, {Cluster: "west", Replicas: 3, Suspended: true}},
		},
		"another scheduler is refused": {
			input:    twoClusters + ownCluster + webDeployment + policy("  schedulerName: my-scheduler\n"),
			wantCode: ExitBadInput,
			wantErr:  []string{"PropagationPolicy default/web", "spec.schedulerName", "my-scheduler"},
		},
		"a dependent override policy not in the input is refused": {
			input:    twoClusters + ownCluster + webDeployment + policy("  dependentOverrides: [eu-registry]\n"),
			wantCode: ExitBadInput,
			wantErr:  []string{"PropagationPolicy default/web", "spec.dependentOverrides", "OverridePolicy eu-registry"},
		},
		"a dependent override policy in the input is planned": {
			input: twoClusters + ownCluster + webDeployment + policy("  dependentOverrides: [eu-registry]\n") + `---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: eu-registry, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules: [{overriders: {labelsOverrider: [{operator: add, value: {eu: "true"}}]}}]
`,
			placement: []PreviewPlacement{{Cluster: "east", Replicas: 3}, {Cluster: "west", Replicas: 3}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runPreview(t, tc.input, "-f", "-", "-o", "json")
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, stderr)
			}
			r := decodeOutput(t, stdout).Results[0]
			if len(tc.wantErr) > 0 {
				if !r.Refused {
					t.Errorf("want refused, got %+v", r)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(r.Error, s) {
						t.Errorf("error %q does not say %q", r.Error, s)
					}
				}
				return
			}
			if r.Error != "" {
				t.Fatalf("error: %s", r.Error)
			}
			if diff := cmp.Diff(tc.placement, r.Placement); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
			if len(r.Rendered) != len(tc.placement) {
				t.Errorf("rendered for %d clusters, want every scheduled one (%d)", len(r.Rendered), len(tc.placement))
			}
		})
	}
	t.Run("table", func(t *testing.T) {
		_, stdout, _ := runPreview(t, twoClusters+ownCluster+webDeployment+policy("  suspension: {dispatchingOnClusters: {clusterNames: [west]}}\n"), "-f", "-")
		for _, want := range []string{"east=3,west=3(suspended)", "# Deployment default/web -> west (dispatch suspended"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("table output lacks %q:\n%s", want, stdout)
			}
		}
		code, stdout, _ := runPreview(t, twoClusters+ownCluster+webDeployment+policy("  schedulerName: my-scheduler\n"), "-f", "-")
		if code != ExitBadInput || !strings.Contains(stdout, "refused") {
			t.Errorf("exit %d, table:\n%s", code, stdout)
		}
	})
}
