package crossplane

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// federatedHPAKind maps FederatedHPA managed resources onto the host's
// autoscaling.flotilla.io FederatedHPA, which the continuous control
// plane runs. Like a policy it acts only in its own namespace (its target
// is a template there), so an unowned one is adopted.
var federatedHPAKind = specObject[*v1alpha1.FederatedHPA, *autoscalingv1.FederatedHPA]{
	kind:     api.KindFederatedHPA,
	group:    &autoscalingv1.GroupVersion,
	newHost:  func() *autoscalingv1.FederatedHPA { return &autoscalingv1.FederatedHPA{} },
	desired:  func(mg *v1alpha1.FederatedHPA) any { return mg.Spec.ForProvider },
	liveSpec: func(h *autoscalingv1.FederatedHPA) any { return h.Spec },
	validate: func(mg *v1alpha1.FederatedHPA) field.ErrorList {
		h := api.FederatedHPA{Spec: mg.Spec.ForProvider}
		h.Namespace, h.Name = mg.GetNamespace(), externalName(mg)
		return underForProvider(api.ValidateFederatedHPA(&h))
	},
	observe: func(_ context.Context, _ *host, mg *v1alpha1.FederatedHPA, live *autoscalingv1.FederatedHPA) error {
		mg.Status.AtProvider = *live.Status.DeepCopy()
		return nil
	},
}

// cronFederatedHPAKind maps CronFederatedHPA managed resources onto the
// host's autoscaling.flotilla.io CronFederatedHPA.
var cronFederatedHPAKind = specObject[*v1alpha1.CronFederatedHPA, *autoscalingv1.CronFederatedHPA]{
	kind:     api.KindCronFederatedHPA,
	group:    &autoscalingv1.GroupVersion,
	newHost:  func() *autoscalingv1.CronFederatedHPA { return &autoscalingv1.CronFederatedHPA{} },
	desired:  func(mg *v1alpha1.CronFederatedHPA) any { return mg.Spec.ForProvider },
	liveSpec: func(h *autoscalingv1.CronFederatedHPA) any { return h.Spec },
	validate: func(mg *v1alpha1.CronFederatedHPA) field.ErrorList {
		c := api.CronFederatedHPA{Spec: mg.Spec.ForProvider}
		c.Namespace, c.Name = mg.GetNamespace(), externalName(mg)
		return underForProvider(api.ValidateCronFederatedHPA(&c))
	},
	observe: func(_ context.Context, _ *host, mg *v1alpha1.CronFederatedHPA, live *autoscalingv1.CronFederatedHPA) error {
		mg.Status.AtProvider = *live.Status.DeepCopy()
		return nil
	},
}

// underForProvider names the host object's spec fields as the managed
// resource's (spec.x → spec.forProvider.x).
func underForProvider(errs field.ErrorList) field.ErrorList {
	for _, e := range errs {
		if rest, ok := strings.CutPrefix(e.Field, "spec."); ok {
			e.Field = "spec.forProvider." + rest
		}
	}
	return errs
}
