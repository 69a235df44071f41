package crds

import (
	"os"
	"strings"
	"testing"

	metav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestDefinitions(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"clusters.fleet.m.flotilla.io":                "Namespaced",
		"propagationpolicies.fleet.m.flotilla.io":     "Namespaced",
		"overridepolicies.fleet.m.flotilla.io":        "Namespaced",
		"manifests.fleet.m.flotilla.io":               "Namespaced",
		"federatedresourcequotas.fleet.m.flotilla.io": "Namespaced",
		"federatedhpas.fleet.m.flotilla.io":           "Namespaced",
		"cronfederatedhpas.fleet.m.flotilla.io":       "Namespaced",
		"multiclusterservices.fleet.m.flotilla.io":    "Namespaced",
		"providerconfigs.fleet.m.flotilla.io":         "Namespaced",
		"providerconfigusages.fleet.m.flotilla.io":    "Namespaced",
		"clusterproviderconfigs.fleet.m.flotilla.io":  "Cluster",
	}
	if len(defs) != len(want) {
		t.Fatalf("got %d CRDs, want %d", len(defs), len(want))
	}
	for _, d := range defs {
		scope, ok := want[d.GetName()]
		if !ok {
			t.Errorf("unexpected CRD %s", d.GetName())
			continue
		}
		if got := d.Object["spec"].(map[string]any)["scope"]; got != scope {
			t.Errorf("%s: scope %v, want %s", d.GetName(), got, scope)
		}
	}
}

// TestPackageMetadata decodes package/crossplane.yaml strictly into
// Crossplane's meta.pkg.crossplane.io/v1 Provider.
func TestPackageMetadata(t *testing.T) {
	data, err := os.ReadFile("../crossplane.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p metav1.Provider
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("crossplane.yaml is not a meta.pkg.crossplane.io/v1 Provider: %v", err)
	}
	if p.APIVersion != "meta.pkg.crossplane.io/v1" || p.Kind != "Provider" || p.Name == "" {
		t.Errorf("got %s %s %q", p.APIVersion, p.Kind, p.Name)
	}
	if p.Spec.Crossplane == nil || !strings.HasPrefix(p.Spec.Crossplane.Version, ">=v2") {
		t.Errorf("spec.crossplane.version %+v, want a v2 constraint (namespaced managed resources)", p.Spec.Crossplane)
	}
}
