package terraform

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// refuseAutoscaling refuses a manifest of FederatedHPA or CronFederatedHPA
// (Karmada's group or flotilla's): they change a template's replicas
// between runs, which no plan can show and no apply keeps doing, so they
// belong to continuous mode. Copied to the members, one would look
// applied while nothing ever scaled. It is checked before the members are
// asked for the kind's scope, so the refusal needs no member.
func refuseAutoscaling(tmpl *unstructured.Unstructured) diag.Diagnostics {
	if !api.IsAutoscalingKind(tmpl.GroupVersionKind().GroupKind()) {
		return nil
	}
	var diags diag.Diagnostics
	diags.AddAttributeError(path.Root("manifest").AtName("kind"), tmpl.GetKind()+" needs continuous mode",
		objectName(tmpl)+": "+api.ErrAutoscalingContinuousOnly.Error()+
			"; create it on the host of the continuous control plane (terraform-provider-flotilla controlplane) as "+
			api.FlotillaAutoscalingGroup+"/v1alpha1, and keep the replicas of the flotilla_manifest it scales out of Terraform's hands, "+
			"as docs/guides/autoscaling.md shows")
	return diags
}
