package terraform

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// exampleInterpreterDir is the example of flotilla_resource_interpreter.
const exampleInterpreterDir = "resources/flotilla_resource_interpreter"

// exampleInterpreterConfig is the example's resource.tf with path.module
// pointing at the example directory, since the test runs it elsewhere.
func exampleInterpreterConfig(t *testing.T) string {
	return strings.ReplaceAll(readExample(t, filepath.Join(exampleInterpreterDir, "resource.tf")),
		"${path.module}", policyExamplePath(t, exampleInterpreterDir))
}

// TestExampleResourceInterpreter applies the example (flotilla's Argo
// Rollout customization read from its Karmada YAML), checks the next plan
// is empty, and runs its import.sh: the import must reproduce the state.
func TestExampleResourceInterpreter(t *testing.T) {
	t.Parallel()
	const addr = "flotilla_resource_interpreter.rollout"
	m := importCommandRE.FindStringSubmatch(readExample(t, filepath.Join(exampleInterpreterDir, "import.sh")))
	if m == nil || m[1] != addr {
		t.Fatalf("%s/import.sh has no `terraform import %s FILE:NAME` line", exampleInterpreterDir, addr)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: exampleInterpreterConfig(t),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(m[3])),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kind"), knownvalue.StringExact(api.KindResourceInterpreterCustomization)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("target").AtMapKey("kind"), knownvalue.StringExact("Rollout")),
				},
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     policyExamplePath(t, filepath.Join(exampleInterpreterDir, m[2])) + ":" + m[3],
				ImportStateVerify: true,
			},
		},
	})
}

// TestResourceInterpreterScriptDoesNotCompile: a script with a syntax
// error is refused at plan time on its attribute, naming the
// customization, the operation and the line.
func TestResourceInterpreterScriptDoesNotCompile(t *testing.T) {
	t.Parallel()
	const config = `
resource "flotilla_resource_interpreter" "broken" {
  name   = "broken"
  target = { api_version = "argoproj.io/v1alpha1", kind = "Rollout" }
  customizations = {
    health_interpretation = { lua_script = "function InterpretHealth(obj)\n  return obj.status ==\nend\n" }
  }
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)"broken",\s+spec.customizations.healthInterpretation.luaScript:\s+healthInterpretation\s+line:3`),
		}},
	})
}

// interpreterValue is the Terraform value of a flotilla_resource_interpreter
// built from a Karmada customization, as import builds it.
func interpreterValue(t *testing.T, yaml, name string) tftypes.Value {
	t.Helper()
	v, _, err := importInterpreter([]byte(yaml), name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInterpretersFromTerraform is the decoder of a manifest's
// resource_interpreters: the shipped customizations decode to their Karmada
// objects; an unknown element leaves the list unknown; a wrong element or a
// broken script is refused on its list index.
func TestInterpretersFromTerraform(t *testing.T) {
	file := policyExamplePath(t, "interpreter/argo-rollout.yaml")
	want := apitest.ReadInterpreters(t, file)
	data := readExample(t, "interpreter/argo-rollout.yaml")
	rollout := interpreterValue(t, data, want[0].Name)
	list := func(elems ...tftypes.Value) tftypes.Value {
		types := make([]tftypes.Type, len(elems))
		for i, e := range elems {
			types[i] = e.Type()
		}
		return tftypes.NewValue(tftypes.Tuple{ElementTypes: types}, elems)
	}
	broken := strings.Replace(data, "function GetReplicas(obj)", "function GetReplicas(obj", 1)
	policy := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{attrKind: tftypes.String}},
		map[string]tftypes.Value{attrKind: tftypes.NewValue(tftypes.String, api.KindPropagationPolicy)})
	unknown := tftypes.NewValue(interpreterObjectType(), tftypes.UnknownValue)
	at := path.Root(attrResourceInterpreters)
	for _, tc := range []struct {
		name      string
		value     tftypes.Value
		want      []string // target kinds
		known     bool
		errorPath string
		errorText string
	}{
		{name: "null", value: tftypes.NewValue(tftypes.DynamicPseudoType, nil), known: true},
		{name: "rollout", value: list(rollout), want: []string{"Rollout"}, known: true},
		{name: "unknown element", value: list(rollout, unknown), known: false},
		{name: "a policy", value: list(rollout, policy), known: true, errorPath: "resource_interpreters[1]", errorText: `its kind is "PropagationPolicy"`},
		{name: "broken script", value: list(interpreterValue(t, broken, want[0].Name)), known: true,
			errorPath: "resource_interpreters[0].customizations.replica_resource.lua_script", errorText: "replicaResource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, known, diags := interpretersFromTerraform(tc.value, at)
			if known != tc.known {
				t.Errorf("known = %v, want %v", known, tc.known)
			}
			if tc.errorPath == "" {
				if diags.HasError() {
					t.Fatalf("unexpected diagnostics: %v", diags)
				}
				var kinds []string
				for _, r := range got {
					kinds = append(kinds, r.Spec.Target.Kind)
				}
				if diff := cmp.Diff(tc.want, kinds); diff != "" {
					t.Errorf("targets (-want +got):\n%s", diff)
				}
				if len(got) == 1 && !cmp.Equal(want[0].Spec, got[0].Spec) {
					t.Errorf("decoded spec differs from the Karmada YAML:\n%s", cmp.Diff(want[0].Spec, got[0].Spec))
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic at %s, got %v", tc.errorPath, diags)
			}
			d, ok := diags[0].(interface{ Path() path.Path })
			if !ok || d.Path().String() != tc.errorPath || !strings.Contains(diags[0].Detail(), tc.errorText) {
				t.Errorf("diagnostic %v %q, want at %s containing %q", d, diags[0].Detail(), tc.errorPath, tc.errorText)
			}
			if got != nil {
				t.Errorf("refused list decoded to %v", got)
			}
		})
	}
}

// TestResourceInterpreterObjectType checks the Terraform type import builds
// equals the one the framework derives from the schema.
func TestResourceInterpreterObjectType(t *testing.T) {
	var resp fwresource.SchemaResponse
	(&interpreterResource{}).Schema(context.Background(), fwresource.SchemaRequest{}, &resp)
	if got := resp.Schema.Type().TerraformType(context.Background()); !got.Equal(interpreterObjectType()) {
		t.Errorf("schema type %s\ndiffers from interpreterObjectType %s", got, interpreterObjectType())
	}
}

var rolloutGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// rolloutConfig is the example customization, an "endless" one whose
// GetReplicas never returns, two members, a policy dividing Rollout
// shop/checkout 2:1 between them, and the Rollout with replicas, given the
// customization named interpreter ("" for none).
func (m *members) rolloutConfig(t *testing.T, replicas int, interpreter string) string {
	interpreters := ""
	if interpreter != "" {
		interpreters = "resource_interpreters = [flotilla_resource_interpreter." + interpreter + "]"
	}
	return exampleInterpreterConfig(t) + m.clusterHCL("east", "") + m.clusterHCL("west", "") + fmt.Sprintf(`
resource "flotilla_resource_interpreter" "endless" {
  name           = "endless"
  target         = { api_version = "argoproj.io/v1alpha1", kind = "Rollout" }
  customizations = { replica_resource = { lua_script = "function GetReplicas(obj)\n  while true do end\nend\n" } }
}

resource "flotilla_propagation_policy" "checkout" {
  name               = "checkout"
  namespace          = "shop"
  resource_selectors = [{ api_version = "argoproj.io/v1alpha1", kind = "Rollout", name = "checkout" }]
  placement = {
    cluster_affinity = { cluster_names = ["east", "west"] }
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference = { static_weight_list = [
        { target_cluster = { cluster_names = ["east"] }, weight = 2 },
        { target_cluster = { cluster_names = ["west"] }, weight = 1 },
      ] }
    }
  }
}

resource "flotilla_manifest" "checkout" {
  manifest = {
    apiVersion = "argoproj.io/v1alpha1"
    kind       = "Rollout"
    metadata   = { name = "checkout", namespace = "shop" }
    spec = {
      replicas = %d
      selector = { matchLabels = { app = "checkout" } }
      template = {
        metadata = { labels = { app = "checkout" } }
        spec     = { containers = [{ name = "checkout", image = "registry.example.com/checkout:2.4.1" }] }
      }
    }
  }
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.checkout]
  wait_for_rollout     = false
  %s
}

data "flotilla_placement" "checkout" {
  manifest             = flotilla_manifest.checkout.manifest
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.checkout]
  %s
}
`, replicas, interpreters, interpreters)
}

// TestAccManifestResourceInterpreter: with flotilla's Argo Rollout
// customization, a Rollout (its CRD served by two real members) is divided
// 2:1 by static weights in the plan's placement, each member gets its
// share in spec.replicas, the next plan is empty, and refresh judges the
// members' status with the customization's health and aggregation. A
// customization whose script never returns fails the plan clearly and
// changes nothing in the members. Without the
// customization (the first step) the whole Rollout goes to both members.
func TestAccManifestResourceInterpreter(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	var crd apiextensionsv1.CustomResourceDefinition
	testkit.MustYAML(t, &crd, apitest.RolloutCRDYAML)
	m.installCRD(t, &crd, rolloutGVR)
	const addr = "flotilla_manifest.checkout"
	placement := func(east, west int64) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(addr, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
			"east": knownvalue.Int64Exact(east), "west": knownvalue.Int64Exact(west),
		}))
	}
	memberReplicas := func(want map[string]int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for cluster, n := range want {
				r, err := dynamic.NewForConfigOrDie(m.byName[cluster].RESTConfig()).Resource(rolloutGVR).Namespace("shop").
					Get(context.Background(), "checkout", metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("cluster %s: %w", cluster, err)
				}
				if got, _, _ := unstructured.NestedInt64(r.Object, "spec", "replicas"); got != n {
					return fmt.Errorf("cluster %s: want %d replicas, got %d", cluster, n, got)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				// Without the customization flotilla cannot divide a
				// Rollout: each member gets it whole.
				Config:           m.rolloutConfig(t, 3, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{placement(0, 0)}},
				Check: resource.ComposeTestCheckFunc(memberReplicas(map[string]int64{"east": 3, "west": 3}),
					resource.TestCheckResourceAttr("data.flotilla_placement.checkout", "placement.east", "0")),
			},
			{
				Config: m.rolloutConfig(t, 3, "rollout"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					placement(2, 1),
				}},
				Check: resource.ComposeTestCheckFunc(memberReplicas(map[string]int64{"east": 2, "west": 1}),
					resource.TestCheckResourceAttr("data.flotilla_placement.checkout", "placement.east", "2"),
					resource.TestCheckResourceAttr("data.flotilla_placement.checkout", "placement.west", "1")),
			},
			{
				// The members report status as Argo's controller would:
				// refresh judges health and sums the status with the
				// customization, which the last apply recorded.
				PreConfig: func() {
					m.setRolloutStatus(t, "east", map[string]any{"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2, "phase": "Healthy"})
					m.setRolloutStatus(t, "west", map[string]any{"replicas": 1, "updatedReplicas": 1, "readyReplicas": 0, "availableReplicas": 0, "phase": "Degraded", "message": "ProgressDeadlineExceeded"})
				},
				Config:           m.rolloutConfig(t, 3, "rollout"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("health"), knownvalue.StringExact("Unhealthy")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("aggregated").AtMapKey("availableReplicas"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("aggregated").AtMapKey("phase"), knownvalue.StringExact("Degraded")),
				},
			},
			{
				// Scaling the template moves the division with it.
				Config: m.rolloutConfig(t, 6, "rollout"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					placement(4, 2),
				}},
				Check: memberReplicas(map[string]int64{"east": 4, "west": 2}),
			},
			{
				// A script that runs out of budget fails the plan, naming
				// the customization, the operation and the line.
				Config:      m.rolloutConfig(t, 6, "endless"),
				ExpectError: regexp.MustCompile(`(?s)Rollout shop/checkout: resource interpreter customization "endless":\s+replicaResource: replicaResource:2: budget exhausted`),
			},
			{
				// Nothing was applied: the members keep their shares.
				Config:           m.rolloutConfig(t, 6, "rollout"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            memberReplicas(map[string]int64{"east": 4, "west": 2}),
			},
		},
	})
}

// TestImportInterpreter: import finds the customization by name among other
// documents, names the others when it is missing, and keeps every field
// of a multi-component customization, componentResource included.
func TestImportInterpreter(t *testing.T) {
	const data = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: other}
spec:
  target: {apiVersion: example.com/v1, kind: Other}
  customizations: {}
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: flink}
spec:
  target: {apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment}
  customizations:
    healthInterpretation: {luaScript: "function InterpretHealth(obj) return true end"}
    componentResource: {luaScript: "function GetComponents(obj) return {} end"}
`
	v, ignored, err := importInterpreter([]byte(data), "flink")
	if err != nil {
		t.Fatal(err)
	}
	if len(ignored) != 0 {
		t.Errorf("ignored %v, want nothing", ignored)
	}
	ric, diags := decodeInterpreter(v, path.Empty())
	if diags.HasError() || ric.Spec.Target.Kind != "FlinkDeployment" || ric.Spec.Customizations.HealthInterpretation == nil ||
		ric.Spec.Customizations.ComponentResource == nil {
		t.Errorf("imported %+v, diagnostics %v", ric, diags)
	}
	_, _, err = importInterpreter([]byte(data), "rollout")
	if err == nil || err.Error() != "there is no ResourceInterpreterCustomization rollout; the file has other, flink" {
		t.Errorf("missing customization: got %v", err)
	}
}

// setRolloutStatus writes the status of Rollout shop/checkout in a member,
// as Argo's controller would.
func (m *members) setRolloutStatus(t *testing.T, cluster string, status map[string]any) {
	t.Helper()
	ctx := context.Background()
	rollouts := dynamic.NewForConfigOrDie(m.byName[cluster].RESTConfig()).Resource(rolloutGVR).Namespace("shop")
	r, err := rollouts.Get(ctx, "checkout", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get rollout in %s: %v", cluster, err)
	}
	status["observedGeneration"] = fmt.Sprint(r.GetGeneration())
	for k, v := range status {
		if n, ok := v.(int); ok {
			status[k] = int64(n)
		}
	}
	r.Object["status"] = status
	if _, err := rollouts.UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set rollout status in %s: %v", cluster, err)
	}
}
