package terraform

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// refuseMultiClusterService refuses a manifest of the multi-cluster
// services kinds (ServiceExport, ServiceImport, Karmada's
// MultiClusterService): what they do is follow the members' endpoints
// between runs, which no plan can show and no apply keeps current, so
// they belong to continuous mode, as Pull members do. Copying one to the
// members would look like it worked while no endpoint ever moved. It is
// checked before the members are asked for the kind's scope, so the
// refusal does not depend on a member serving the CRDs.
func refuseMultiClusterService(tmpl *unstructured.Unstructured) diag.Diagnostics {
	if !multicluster.ContinuousOnly(tmpl.GroupVersionKind().GroupKind()) {
		return nil
	}
	where := "; declare it on the host of the continuous control plane (terraform-provider-flotilla controlplane) with a PropagationPolicy, " +
		"as docs/guides/multi-cluster-services.md shows"
	if gk := tmpl.GroupVersionKind().GroupKind(); gk == multicluster.MultiClusterServiceGK || gk == multicluster.FlotillaMultiClusterServiceGK {
		// Not propagated: the control plane reads it on the host, under
		// flotilla's group, and the Service's own placement decides.
		where = "; declare it as networking.flotilla.io/v1alpha1 MultiClusterService on the host of the continuous control plane " +
			"(no PropagationPolicy: the Service's placement decides its clusters), as docs/guides/multi-cluster-services.md shows"
	}
	var diags diag.Diagnostics
	diags.AddAttributeError(path.Root("manifest").AtName("kind"), tmpl.GetKind()+" needs continuous mode",
		objectName(tmpl)+": "+multicluster.ErrContinuousOnly.Error()+where)
	return diags
}
