package webhook_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
)

// TestWebhookRefusesBrokenCustomization: a customization whose script does
// not compile or does not define its function is refused at create time
// naming the field and the line; a working one, a componentResource
// script included, is stored.
func TestWebhookRefusesBrokenCustomization(t *testing.T) {
	hub := startHost(t)
	ric := func(rules api.CustomizationRules) *configv1.ResourceInterpreterCustomization {
		return &configv1.ResourceInterpreterCustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "rollout"},
			Spec: api.ResourceInterpreterCustomizationSpec{
				Target:         api.CustomizationTarget{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout"},
				Customizations: rules,
			},
		}
	}
	cases := map[string]struct {
		rules api.CustomizationRules
		want  string
	}{
		"syntax error": {api.CustomizationRules{HealthInterpretation: &api.LuaScript{LuaScript: "function InterpretHealth(obj)\n  return obj.status ==\nend"}},
			`spec.customizations.healthInterpretation.luaScript: Invalid value: "(script)": healthInterpretation line:3`},
		"no function": {api.CustomizationRules{ReplicaResource: &api.LuaScript{LuaScript: "function Replicas(obj) return 1 end"}},
			"spec.customizations.replicaResource.luaScript: Invalid value: \"(script)\": the script defines no function GetReplicas"},
		"componentResource without GetComponents": {api.CustomizationRules{ComponentResource: &api.LuaScript{LuaScript: "function GetReplicas(obj) return {} end"}},
			"spec.customizations.componentResource.luaScript: Invalid value: \"(script)\": the script defines no function GetComponents"},
	}
	for name, c := range cases {
		err := hub.Create(t.Context(), ric(c.rules))
		if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), `ResourceInterpreterCustomization.config.flotilla.io "rollout" is invalid`) {
			t.Errorf("%s: create = %v, want an Invalid error containing %q", name, err, c.want)
		}
	}
	if err := hub.Create(t.Context(), ric(api.CustomizationRules{HealthInterpretation: &api.LuaScript{LuaScript: "function InterpretHealth(obj) return true end"},
		ComponentResource: &api.LuaScript{LuaScript: "function GetComponents(obj) return {{name = \"a\", replicas = 1}} end"}})); err != nil {
		t.Fatalf("create of a working customization: %v", err)
	}
}
