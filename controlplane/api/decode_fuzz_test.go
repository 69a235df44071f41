package api

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must never panic, must
// return either a bundle or an error, and every error must be a
// *DocumentError that names the source and a document.
func FuzzDecode(f *testing.F) {
	if fleet, err := os.ReadFile("testdata/fleet.yaml"); err == nil {
		f.Add(fleet)
	}
	for _, seed := range []string{
		"",
		"---\n---\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {k: v}\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- 3\n",
		"apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {region: r, taints: [{key: a, effect: NoSchedule}]}\nstatus: {resourceSummary: {allocatable: {cpu: 1e9}}}\n",
		"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  placement:\n    spreadConstraints: [{spreadByField: region, minGroups: 2, maxGroups: 1}]\n    replicaScheduling: {replicaSchedulingType: Divided, weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [a]}, weight: 0}]}}\n",
		"apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o, namespace: x}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  overrideRules: [{overriders: {imageOverrider: [{component: Registry, operator: replace, value: r.io}], plaintext: [{path: /a, operator: remove}]}}]\n",
		"apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: b, namespace: d}\nspec: {resource: {apiVersion: v1, kind: ConfigMap, name: a}, clusters: [{name: c, replicas: -1}]}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": [1]}}",
		"a: [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]\n",
		"apiVersion: v1\nkind: ConfigMap\nkind: Secret\n",
		"\x00\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode("fuzz.yaml", data)
		if err == nil {
			if b == nil {
				t.Fatal("Decode returned neither a bundle nor an error")
			}
			return
		}
		if b != nil {
			t.Fatalf("Decode returned a bundle together with the error %v", err)
		}
		for _, e := range leafErrors(err) {
			var de *DocumentError
			if !errors.As(e, &de) {
				t.Fatalf("error %q (%T) is not a *DocumentError", e, e)
			}
			if de.Document < 1 || !strings.HasPrefix(e.Error(), de.Location()+":") ||
				!strings.HasPrefix(de.Location(), "fuzz.yaml:") {
				t.Fatalf("error %q does not start with its location fuzz.yaml:<document>", e)
			}
		}
	})
}

// leafErrors unpacks errors.Join trees.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}
