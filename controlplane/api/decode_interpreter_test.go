package api_test

import (
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

const ricHeader = "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: rollout}\n"

// TestDecodeInterpreterCustomization: a ResourceInterpreterCustomization
// is decoded strictly into Bundle.Interpreters, not taken as a template,
// and its errors name the file, the object and the field.
func TestDecodeInterpreterCustomization(t *testing.T) {
	b, err := api.Decode("r.yaml", []byte(ricHeader+"spec:\n  target: {apiVersion: argoproj.io/v1alpha1, kind: Rollout}\n  customizations:\n    healthInterpretation: {luaScript: 'function InterpretHealth(o) return true end'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Interpreters) != 1 || len(b.Templates) != 0 || b.Interpreters[0].Spec.Target.Kind != "Rollout" ||
		b.Interpreters[0].Spec.Customizations.HealthInterpretation == nil || b.Origins["config.karmada.io/v1alpha1 ResourceInterpreterCustomization rollout"] != "r.yaml:1" {
		t.Fatalf("decoded %+v", b)
	}
	cases := map[string]struct{ yaml, want string }{
		"unknown rule": {ricHeader + "spec:\n  target: {apiVersion: v1, kind: Pod}\n  customizations:\n    replicaCount: {luaScript: x}\n",
			`r.yaml:1: ResourceInterpreterCustomization rollout: spec.customizations.replicaCount: Forbidden: unknown field`},
		"no target kind": {ricHeader + "spec:\n  target: {apiVersion: v1}\n  customizations: {}\n",
			`r.yaml:1: ResourceInterpreterCustomization rollout: spec.target.kind: Required value`},
		"another config.karmada.io kind": {"apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata: {name: w}\n",
			`kind: Unsupported value: "ResourceInterpreterWebhookConfiguration": supported values: "ResourceInterpreterCustomization"`},
	}
	for name, c := range cases {
		_, err := api.Decode("r.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
}
