package terraform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestParseImportID(t *testing.T) {
	cases := []struct {
		kind    policyKind
		id      string
		want    importRef
		wantErr string
	}{
		{propagationPolicyKind, "policies.yaml:default/web", importRef{"policies.yaml", "default", "web"}, ""},
		{propagationPolicyKind, `C:\fleet\policies.yaml:apps/web`, importRef{`C:\fleet\policies.yaml`, "apps", "web"}, ""},
		{clusterOverridePolicyKind, "./a:b/c.yaml:debug", importRef{"./a:b/c.yaml", "", "debug"}, ""},
		{propagationPolicyKind, "policies.yaml:web", importRef{}, "with the namespace"},
		{propagationPolicyKind, "policies.yaml:a/b/c", importRef{}, "with the namespace"},
		{propagationPolicyKind, "default/web", importRef{}, "FILE:NAMESPACE/NAME"},
		{propagationPolicyKind, "policies.yaml:", importRef{}, "FILE:NAMESPACE/NAME"},
		{clusterPropagationPolicyKind, "policies.yaml:default/web", importRef{}, "has no namespace"},
	}
	for _, tc := range cases {
		got, err := tc.kind.parseImportID(tc.id)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s %q: error %v, want %q", tc.kind.kind, tc.id, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s %q: got %+v, %v; want %+v", tc.kind.kind, tc.id, got, err, tc.want)
		}
	}
}

func TestImportState(t *testing.T) {
	const twoDocs = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  schedulerName: default-scheduler
  association: false
  dependentOverrides: []
  placement:
    clusterAffinity: {clusterNames: [east]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: apps}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  schedulerName: custom
  propagateDeps: true
  failover:
    cluster: {purgeMode: Directly}
  suspension: {dispatching: true}
`
	t.Run("defaults the namespace and does not warn about unset fields", func(t *testing.T) {
		got, err := propagationPolicyKind.importState(importRef{"p.yaml", "default", "web"}, []byte(twoDocs))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.ignored) != 0 {
			t.Errorf("Karmada's default scheduler and zero values need no warning, got %q", got.ignored)
		}
		if s := got.state.String(); !strings.Contains(s, `"cluster_names":tftypes.List[tftypes.String]<tftypes.String<"east">>`) {
			t.Errorf("state lacks cluster_names east: %s", s)
		}
	})
	t.Run("lists what it leaves out", func(t *testing.T) {
		got, err := propagationPolicyKind.importState(importRef{"p.yaml", "apps", "api"}, []byte(twoDocs))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"spec.failover: " + skippedFields["PropagationSpec.failover"].reason,
			"spec.schedulerName: " + skippedFields["PropagationSpec.schedulerName"].reason,
		}
		if diff := cmp.Diff(want, got.ignored); diff != "" {
			t.Errorf("ignored (-want +got):\n%s", diff)
		}
		// suspension is an attribute now: imported, not left out.
		if s := got.state.String(); !strings.Contains(s, `"dispatching":tftypes.Bool<"true">`) {
			t.Errorf("state lacks suspension.dispatching = true: %s", s)
		}
	})
	errs := []struct {
		name string
		kind policyKind
		ref  importRef
		data string
		want string
	}{
		{"missing policy", propagationPolicyKind, importRef{"p.yaml", "default", "nope"}, twoDocs,
			"there is no PropagationPolicy default/nope; the file has PropagationPolicy default/web, apps/api"},
		{"other kind", overridePolicyKind, importRef{"p.yaml", "default", "web"}, twoDocs,
			"there is no OverridePolicy default/web"},
		{"invalid policy", propagationPolicyKind, importRef{"p.yaml", "default", "web"},
			"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web}\nspec:\n  resourceSelectors: []\n",
			"p.yaml:1: PropagationPolicy default/web: spec.resourceSelectors: Required value"},
		{"unknown field", propagationPolicyKind, importRef{"p.yaml", "default", "web"},
			"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web}\nspec:\n  placment: {}\n",
			"spec.placment: Forbidden: unknown field"},
		{"workload affinity", propagationPolicyKind, importRef{"p.yaml", "default", "web"},
			"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Service}]\n  placement:\n    workloadAffinity: {antiAffinity: {groupByLabelKey: app.group}}\n",
			"p.yaml:1: PropagationPolicy default/web: spec.placement.workloadAffinity: Forbidden: workloadAffinity is not supported: flotilla schedules each template on its own"},
		{"association", clusterPropagationPolicyKind, importRef{file: "p.yaml", name: "web"},
			"apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: web}\nspec:\n  association: true\n  resourceSelectors: [{apiVersion: v1, kind: Service}]\n",
			"p.yaml:1: ClusterPropagationPolicy web: spec.association: Forbidden: association is deprecated in Karmada and has no effect there or here; set propagateDeps: true"},
		{"not YAML", propagationPolicyKind, importRef{"p.yaml", "default", "web"}, "kind: [", "not valid Karmada YAML"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.kind.importState(tc.ref, []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPolicyImportErrors(t *testing.T) {
	t.Parallel()
	config := `resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
}
`
	file := writePolicyFile(t, "p.yaml", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n"+
		"metadata: {name: other, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Secret}]\n")
	cases := map[string]struct{ id, want string }{
		"no file":    {"/nonexistent/p.yaml:default/web", "Cannot read the Karmada YAML to import"},
		"bad id":     {"default/web", "the import ID must look like FILE:NAMESPACE/NAME"},
		"not in it":  {file + ":default/web", "there is no PropagationPolicy default/web; the file has PropagationPolicy default/other"},
		"no namespc": {file + ":other", "with the namespace"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: policyTestProviders,
				Steps: []resource.TestStep{{
					Config:        config,
					ResourceName:  "flotilla_propagation_policy.web",
					ImportState:   true,
					ImportStateId: tc.id,
					ExpectError:   wrappedMessage(tc.want),
				}},
			})
		})
	}
}

// TestPolicyImportThenPlan imports Karmada YAML into an empty state and
// checks that a configuration written like the YAML plans no change.
func TestPolicyImportThenPlan(t *testing.T) {
	t.Parallel()
	file := writePolicyFile(t, "p.yaml", propagationPolicyWebYAML)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: policyTestProviders,
		Steps: []resource.TestStep{
			{
				Config:             fmt.Sprintf(propagationPolicyWeb, 1),
				ResourceName:       "flotilla_propagation_policy.web",
				ImportState:        true,
				ImportStateId:      file + ":default/web",
				ImportStatePersist: true,
			},
			{
				Config:   fmt.Sprintf(propagationPolicyWeb, 1),
				PlanOnly: true, // fails on a non-empty plan
			},
		},
	})
}
