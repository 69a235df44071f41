package terraform

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// TestConnectionSecretsAreSensitive: every connection attribute that may
// carry a credential is sensitive in flotilla_cluster's schema, exec.args
// included (plugins take tokens as arguments too), so plan output and
// logs never show them.
func TestConnectionSecretsAreSensitive(t *testing.T) {
	attrs := clusterResourceSchema().Attributes
	nested := func(parent, name string) schema.Attribute {
		t.Helper()
		obj, ok := attrs[parent].(schema.SingleNestedAttribute)
		if !ok {
			t.Fatalf("attribute %s is %T, want a single nested attribute", parent, attrs[parent])
		}
		return obj.Attributes[name]
	}
	for path, attr := range map[string]schema.Attribute{
		"token":          attrs[connAttrToken],
		"client_key":     attrs[connAttrClientKey],
		"proxy_url":      attrs[connAttrProxyURL],
		"kubeconfig.raw": nested(connAttrKubeconfig, connAttrRaw),
		"exec.args":      nested(connAttrExec, connAttrArgs),
		"exec.env":       nested(connAttrExec, connAttrEnv),
	} {
		if attr == nil {
			t.Errorf("%s: no such attribute", path)
			continue
		}
		if !attr.IsSensitive() {
			t.Errorf("%s is not sensitive", path)
		}
	}
}

// TestAccTrustedExecArgsSensitive is issue 31's item 8 with the real
// terraform: the provider block's trusted_exec.args, which name the same
// arguments a credential plugin takes (tokens, account names), show in
// neither the human plan nor `terraform show -json` of the plan (outside
// its echo of the configuration), and the provider schema Terraform reads
// marks them sensitive, so Terraform redacts them wherever it redacts
// sensitive attributes.
func TestAccTrustedExecArgsSensitive(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	const secretArg = "acct-tok-5e1f9c"
	d.write(requiredProvidersHCL + providerHCL("args", fmt.Sprintf(`trusted_exec = [{ command = "aws", args = ["eks", "get-token", "--token", %q] }]`, secretArg)) +
		policyHCL("app", "default", "v1", "ConfigMap", []string{"east"}, "") + `
output "policy" { value = flotilla_propagation_policy.app.name }
`)
	out := d.mustRun("plan", "-no-color", "-out=args.tfplan")
	if strings.Contains(out, secretArg) {
		t.Fatalf("the plan shows trusted_exec.args:\n%s", out)
	}
	// The configuration section echoes the user's own literal inputs,
	// sensitive or not (as assertNoSecretInJSON says); everything else of
	// the plan must not hold the arguments.
	var plan map[string]json.RawMessage
	if err := json.Unmarshal([]byte(d.mustRun("show", "-json", "args.tfplan")), &plan); err != nil {
		t.Fatal(err)
	}
	delete(plan, "configuration")
	if doc, _ := json.Marshal(plan); strings.Contains(string(doc), secretArg) {
		t.Fatalf("show -json of the plan holds trusted_exec.args: %s", doc)
	}
	var schemas struct {
		ProviderSchemas map[string]struct {
			Provider struct {
				Block struct {
					Attributes map[string]struct {
						NestedType struct {
							Attributes map[string]struct {
								Sensitive bool `json:"sensitive"`
							} `json:"attributes"`
						} `json:"nested_type"`
					} `json:"attributes"`
				} `json:"block"`
			} `json:"provider"`
		} `json:"provider_schemas"`
	}
	if err := json.Unmarshal([]byte(d.mustRun("providers", "schema", "-json")), &schemas); err != nil {
		t.Fatal(err)
	}
	p, ok := schemas.ProviderSchemas[providerAddressForTests]
	if !ok {
		t.Fatalf("no schema for %s", providerAddressForTests)
	}
	for _, name := range []string{"args", "env"} {
		if !p.Provider.Block.Attributes["trusted_exec"].NestedType.Attributes[name].Sensitive {
			t.Errorf("terraform does not see trusted_exec.%s as sensitive", name)
		}
	}
}
