package terraform

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// importFleet is three apiserver-only members m1, m2, m3, declared in
// Terraform by kubeconfig context, the connection an import ID can name.
type importFleet struct {
	members    []*faultMember
	kubeconfig string
	contexts   []string
}

func startImportFleet(t *testing.T) *importFleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	f := &importFleet{kubeconfig: env.TestKubeconfig(t)}
	ms := startFaultMembersOf(t, env)
	f.members = ms
	for _, c := range env.Clusters {
		f.contexts = append(f.contexts, c.Name)
	}
	return f
}

// config places ConfigMap default/web (data v = version) in m1 and m2, with
// outputs that read rendered and placement, as examples/active-active does.
// importBlock adds an import block with that ID.
func (f *importFleet) config(version, importBlock string) string {
	var b strings.Builder
	b.WriteString(requiredProvidersHCL + providerHCL(faultFleet, trustedContextsHCL))
	var refs []string
	for i, m := range f.members {
		fmt.Fprintf(&b, "resource \"flotilla_cluster\" %q {\n  name = %q\n  kubeconfig = { path = %q, context = %q }\n}\n", m.name, m.name, f.kubeconfig, f.contexts[i])
		refs = append(refs, "flotilla_cluster."+m.name)
	}
	b.WriteString(policyHCL("web", "default", "v1", "ConfigMap", []string{"m1", "m2"}, ""))
	fmt.Fprintf(&b, `
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "web", namespace = "default", labels = { app = "web" } }
    data       = { v = %q }
  }
  clusters             = [%s]
  propagation_policies = [flotilla_propagation_policy.web]
}
output "data" {
  value = { for cluster, obj in flotilla_manifest.web.rendered : cluster => jsondecode(obj).data.v }
}
output "placement" {
  value = flotilla_manifest.web.placement
}
%s`, version, strings.Join(refs, ", "), importBlock)
	return b.String()
}

// importID names every member, m3 too, which does not hold the object.
func (f *importFleet) importID() string {
	id := "v1, Kind=ConfigMap, default/web"
	for i, m := range f.members {
		id += fmt.Sprintf(";cluster=%s,%s,%s", m.name, f.kubeconfig, f.contexts[i])
	}
	return id + ";policy=PropagationPolicy default/web"
}

// TestAccManifestImportStateVerify imports an applied flotilla_manifest by
// the ID that names its members and policy, and verifies every attribute
// that is not write-only against the state the apply left.
func TestAccManifestImportStateVerify(t *testing.T) {
	t.Parallel()
	f := startImportFleet(t)
	config := strings.Replace(f.config("1", ""), requiredProvidersHCL, "", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config:            config,
				ResourceName:      "flotilla_manifest.web",
				ImportState:       true,
				ImportStateId:     f.importID(),
				ImportStateVerify: true,
			},
		},
	})
}

// manifestState is flotilla_manifest.web's values in `terraform show -json`.
func manifestState(t *testing.T, d *tfDriver) map[string]any {
	t.Helper()
	var show struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(d.mustRun("show", "-json")), &show); err != nil {
		t.Fatal(err)
	}
	for _, r := range show.Values.RootModule.Resources {
		if r.Address == "flotilla_manifest.web" {
			return r.Values
		}
	}
	t.Fatal("flotilla_manifest.web is not in the state")
	return nil
}

// TestFaultManifestImportCLI removes an applied flotilla_manifest from the
// state and imports it back, with the real terraform, first with
// `terraform import` under a configuration whose outputs iterate rendered,
// then with an import block. Both imports restore every attribute the
// apply recorded (compared with `terraform show -json`), the outputs read
// the same values, and the plan that follows is empty: the import block's
// plan imports and changes nothing.
func TestFaultManifestImportCLI(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f := startImportFleet(t)
	d.write(f.config("1", ""))
	d.mustRun("apply", "-auto-approve", "-no-color")
	applied := manifestState(t, d)
	outputs := d.mustRun("output", "-json")

	d.mustRun("state", "rm", "flotilla_manifest.web")
	d.mustRun("import", "-no-color", "flotilla_manifest.web", f.importID())
	if diff := cmp.Diff(applied, manifestState(t, d)); diff != "" {
		t.Errorf("terraform import did not restore what the apply recorded (-applied +imported):\n%s", diff)
	}
	d.expectEmptyPlan()
	d.mustRun("apply", "-auto-approve", "-no-color") // records the outputs from the imported state
	if got := d.mustRun("output", "-json"); got != outputs {
		t.Errorf("outputs after import:\n%s\nwant, as after apply:\n%s", got, outputs)
	}

	d.mustRun("state", "rm", "flotilla_manifest.web")
	d.write(f.config("1", fmt.Sprintf("import {\n  to = flotilla_manifest.web\n  id = %q\n}\n", f.importID())))
	plan := d.mustRun("plan", "-no-color")
	if !strings.Contains(plan, "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Errorf("the plan with an import block changes something:\n%s", plan)
	}
	d.mustRun("apply", "-auto-approve", "-no-color")
	if diff := cmp.Diff(applied, manifestState(t, d)); diff != "" {
		t.Errorf("the import block did not restore what the apply recorded (-applied +imported):\n%s", diff)
	}
	checkNoOrphans(t, f.members[:2], map[string]string{"web": "1"})
	checkNoOrphans(t, f.members[2:], map[string]string{})
	d.write(f.config("1", ""))
	d.expectEmptyPlan()
}
