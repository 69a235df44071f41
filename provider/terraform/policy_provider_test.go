package terraform

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// policyResources are the four policy resources, as provider.go lists them.
var policyResources = []func() resource.Resource{
	newPropagationPolicyResource,
	newClusterPropagationPolicyResource,
	newOverridePolicyResource,
	newClusterOverridePolicyResource,
}

// policyTestProviders serves the provider with the policy resources added to
// whatever Resources() lists, skipping those it already lists. Once
// provider.go lists them, it serves exactly testProviders' provider.
var policyTestProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"flotilla": providerserver.NewProtocol6WithError(withPolicyResources{New("test")()}),
}

type withPolicyResources struct {
	provider.Provider
}

func (w withPolicyResources) Resources(ctx context.Context) []func() resource.Resource {
	out := w.Provider.Resources(ctx)
	have := map[string]bool{}
	for _, f := range out {
		have[resourceTypeName(ctx, f())] = true
	}
	for _, f := range policyResources {
		if !have[resourceTypeName(ctx, f())] {
			out = append(out, f)
		}
	}
	return out
}

func (w withPolicyResources) Functions(ctx context.Context) []func() function.Function {
	if p, ok := w.Provider.(provider.ProviderWithFunctions); ok {
		return p.Functions(ctx)
	}
	return nil
}

func resourceTypeName(ctx context.Context, r resource.Resource) string {
	var resp resource.MetadataResponse
	r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "flotilla"}, &resp)
	return resp.TypeName
}
