package terraform

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// refuseInterpreterCustomization refuses a manifest that is a Karmada
// ResourceInterpreterCustomization: in Terraform a customization is a
// flotilla_resource_interpreter passed to the manifests in
// resource_interpreters, and copying one to members would teach flotilla
// nothing. It is
// checked before the members are asked for the kind's scope, so the
// refusal does not depend on a member serving Karmada's CRD.
func refuseInterpreterCustomization(tmpl *unstructured.Unstructured) diag.Diagnostics {
	gvk := tmpl.GroupVersionKind()
	if gvk.Group != api.ConfigGroup || gvk.Kind != api.KindResourceInterpreterCustomization {
		return nil
	}
	var diags diag.Diagnostics
	diags.AddAttributeError(path.Root("manifest").AtName("kind"), "ResourceInterpreterCustomization is not a manifest",
		objectName(tmpl)+": "+render.ErrCustomizationNotTemplate.Error()+
			"; declare it as a flotilla_resource_interpreter and pass it in the resource_interpreters of the manifests of its kind")
	return diags
}
