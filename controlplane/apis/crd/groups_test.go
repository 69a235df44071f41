package crd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
)

// TestInGroups checks the rewrite of the generated definitions into each
// family of API groups: name, group, the bindings' version in Karmada's,
// the installed-by label, and a schema left as generated.
func TestInGroups(t *testing.T) {
	generated, err := DefinitionsFrom(manifests)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		groups  apis.Groups
		want    map[string]string // CRD name -> version
		missing string
	}{
		{apis.FlotillaGroups, map[string]string{
			"resourcebindings.work.flotilla.io":      "v1alpha1",
			"works.work.flotilla.io":                 "v1alpha1",
			"propagationpolicies.policy.flotilla.io": "v1alpha1",
		}, "resourcebindings.work.karmada.io"},
		{apis.KarmadaGroups, map[string]string{
			"resourcebindings.work.karmada.io":                    "v1alpha2",
			"clusterresourcebindings.work.karmada.io":             "v1alpha2",
			"works.work.karmada.io":                               "v1alpha1",
			"clusters.cluster.karmada.io":                         "v1alpha1",
			"propagationpolicies.policy.karmada.io":               "v1alpha1",
			"federatedresourcequotas.policy.karmada.io":           "v1alpha1",
			"resourceinterpretercustomizations.config.karmada.io": "v1alpha1",
			"federatedhpas.autoscaling.karmada.io":                "v1alpha1",
		}, "resourcebindings.work.flotilla.io"},
	} {
		t.Run(string(tc.groups), func(t *testing.T) {
			defs, err := inGroups(generated, tc.groups)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*unstructured.Unstructured{}
			for _, d := range defs {
				byName[d.GetName()] = d
				group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
				if !tc.groups.Owns(group) || !strings.HasSuffix(d.GetName(), "."+group) {
					t.Errorf("crd %s has group %q, want one of %s's ending its name", d.GetName(), group, tc.groups.Domain())
				}
				if d.GetLabels()[LabelInstalledBy] != InstalledByFlotilla {
					t.Errorf("crd %s is not labelled %s=%s", d.GetName(), LabelInstalledBy, InstalledByFlotilla)
				}
			}
			for name, version := range tc.want {
				d := byName[name]
				if d == nil {
					t.Errorf("no crd %s", name)
					continue
				}
				versions, _, _ := unstructured.NestedSlice(d.Object, "spec", "versions")
				v := versions[0].(map[string]any)
				if v["name"] != version || v["schema"] == nil {
					t.Errorf("crd %s: version %v (schema kept: %t), want %s", name, v["name"], v["schema"] != nil, version)
				}
			}
			if byName[tc.missing] != nil {
				t.Errorf("crd %s is in %s's groups", tc.missing, tc.groups)
			}
		})
	}
	if generated[0].GetLabels()[LabelInstalledBy] != "" {
		t.Error("inGroups changed the definitions it was given")
	}
}
