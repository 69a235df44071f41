package cli

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// refuseAutoscaling turns the plan of a FederatedHPA or CronFederatedHPA
// (Karmada's group or flotilla's) into a refusal that names continuous
// mode: what they do is change a template's replicas between runs, on the
// members' live metrics or on a schedule, so no static placement of the
// object itself answers anything a user asks of a preview. It reports
// whether pr was refused.
func refuseAutoscaling(pr *PreviewResult) bool {
	gv, _ := schema.ParseGroupVersion(pr.Template.APIVersion)
	if !api.IsAutoscalingKind(schema.GroupKind{Group: gv.Group, Kind: pr.Template.Kind}) {
		return false
	}
	pr.Placement, pr.Rendered, pr.Reasons, pr.Rollout, pr.Services = []PreviewPlacement{}, map[string]map[string]any{}, map[string]string{}, nil, nil
	pr.Refused = true
	pr.Error = api.ErrAutoscalingContinuousOnly.Error() +
		"; create it on the host of the continuous control plane (terraform-provider-flotilla controlplane) as " +
		api.FlotillaAutoscalingGroup + "/v1alpha1, as docs/guides/autoscaling.md shows"
	return true
}
