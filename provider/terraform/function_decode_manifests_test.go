package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

func TestDecodeManifestsFunction(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.RequireAbove(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: `
locals {
  docs = provider::flotilla::decode_manifests(<<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: default
    spec:
      replicas: 3
      template:
        spec:
          containers:
            - name: web
              image: nginx:1.27
    ---
    # an empty document is skipped
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: web-config}
    data: {mode: "fast"}
    YAML
  )
}
output "count" { value = length(local.docs) }
output "kinds" { value = [for d in local.docs : d.kind] }
output "replicas" { value = local.docs[0].spec.replicas }
output "image" { value = local.docs[0].spec.template.spec.containers[0].image }
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("count", knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownOutputValue("kinds", knownvalue.TupleExact([]knownvalue.Check{
						knownvalue.StringExact("Deployment"), knownvalue.StringExact("ConfigMap"),
					})),
					statecheck.ExpectKnownOutputValue("replicas", knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownOutputValue("image", knownvalue.StringExact("nginx:1.27")),
				},
			},
		},
	})
}

func TestDecodeManifestsFunctionErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		yaml string
		want string
	}{
		"missing kind":  {yaml: "apiVersion: v1\nmetadata: {name: a}\n", want: `document 1: field kind is required`},
		"missing name":  {yaml: "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", want: `document 1: field metadata.name is required`},
		"not a mapping": {yaml: "- a\n- b\n", want: `document 1: not a mapping`},
		"broken yaml":   {yaml: "apiVersion: v1\nkind: [\n", want: `document 1`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.RequireAbove(tfversion.Version1_8_0)},
				ProtoV6ProviderFactories: testProviders,
				Steps: []resource.TestStep{{
					Config:      "output \"x\" {\n  value = provider::flotilla::decode_manifests(" + quoteHCL(tc.yaml) + ")\n}\n",
					ExpectError: wrappedMessage(tc.want),
				}},
			})
		})
	}
}
