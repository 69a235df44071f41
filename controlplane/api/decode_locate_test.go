package api

import (
	"strings"
	"testing"
)

// TestDecodeNamesExactPaths: a wrongly typed value inside a list, and a
// malformed quantity, are reported with their full path.
func TestDecodeNamesExactPaths(t *testing.T) {
	cases := map[string]struct {
		yaml string
		want string
	}{
		"list index": {
			yaml: "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web}\n" +
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n" +
				"  placement:\n    spreadConstraints: [{spreadByField: cluster, minGroups: 1}, {spreadByField: region, maxGroups: \"x\"}]\n",
			want: `p.yaml:1: PropagationPolicy default/web: spec.placement.spreadConstraints[1].maxGroups: Invalid value: "x": must be of type int`,
		},
		"quantity": {
			yaml: "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\n" +
				"status:\n  resourceSummary:\n    allocatable: {cpu: \"4\", memory: lots}\n",
			want: `p.yaml:1: Cluster east: status.resourceSummary.allocatable[memory]: Invalid value: "lots": quantities must match`,
		},
		"static weight": {
			yaml: "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web}\n" +
				"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n" +
				"  placement:\n    replicaScheduling:\n      weightPreference:\n        staticWeightList: [{targetCluster: {clusterNames: [a]}, weight: heavy}]\n",
			want: `spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: "heavy": must be of type int64`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode("p.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want an error containing\n  %s\ngot\n  %v", tc.want, err)
			}
		})
	}
}
