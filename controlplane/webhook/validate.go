// Package webhook is the continuous control plane's validating admission
// webhook: it refuses Clusters and policies that the engine would refuse, at
// `kubectl apply` time, with the same field paths and messages as `preview`
// and the Terraform provider, because all three call controlplane/api's
// validation. It also guards flotilla's own work objects: a ResourceBinding
// must be one the controllers would render (controller.ValidateResourceBinding)
// and only the control plane's identity may write Works, which are applied
// to members with the control plane's credentials. It plays the part of
// karmada-webhook. It owns the webhook's
// handlers, its serving certificate and its ValidatingWebhookConfiguration;
// it must not import provider/.
package webhook

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// Paths the handlers are served on, one per kind.
const (
	PathCluster                  = "/validate-cluster"
	PathPropagationPolicy        = "/validate-propagationpolicy"
	PathClusterPropagationPolicy = "/validate-clusterpropagationpolicy"
	PathOverridePolicy           = "/validate-overridepolicy"
	PathClusterOverridePolicy    = "/validate-clusteroverridepolicy"
	// PathFederatedResourceQuota validates quotas as Karmada's webhook does.
	PathFederatedResourceQuota = "/validate-federatedresourcequota"
	// PathFederatedHPA validates FederatedHPAs as Kubernetes validates an
	// autoscaling/v2 HorizontalPodAutoscaler.
	PathFederatedHPA = "/validate-federatedhpa"
	// PathCronFederatedHPA validates CronFederatedHPAs: their targets,
	// schedules, time zones and replicas.
	PathCronFederatedHPA = "/validate-cronfederatedhpa"
	// PathMultiClusterService validates MultiClusterServices with the
	// rules the mcs controller applies (only CrossCluster, each cluster
	// named once).
	PathMultiClusterService = "/validate-multiclusterservice"
	// PathResourceInterpreterCustomization validates customizations: their
	// fields and that every script compiles and defines its function.
	PathResourceInterpreterCustomization = "/validate-resourceinterpretercustomization"
)

// Server is where the handlers are registered: the manager's webhook server.
type Server interface {
	Register(path string, hook http.Handler)
}

// validator adapts one engine validation function to admission: create and
// update are checked, delete never is. The object is validated after
// Karmada's defaults are applied to a copy, as Karmada's mutating webhook
// would have applied them first.
type validator[T any] struct {
	gk       schema.GroupKind
	validate func(T) field.ErrorList
	name     func(T) string
}

func (v validator[T]) check(obj T) (admission.Warnings, error) {
	if errs := v.validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(v.gk, v.name(obj), errs)
	}
	return nil, nil
}

// ValidateCreate implements admission.CustomValidator: it checks a created object as the engine would.
func (v validator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return v.check(obj)
}

// ValidateUpdate implements admission.CustomValidator: it checks an updated object as the engine would.
func (v validator[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return v.check(obj)
}

// ValidateDelete implements admission.CustomValidator; deletions are always allowed.
func (v validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// Register adds one validating handler per kind to the server.
// Every handler shares one bound on the admission reviews in flight
// (Options.MaxInFlight).
func Register(srv Server, scheme *runtime.Scheme, opts Options) {
	limit := newInFlightLimit(opts.MaxInFlight)
	register := func(path string, hook *admission.Webhook) {
		hook.Handler = limit.wrap(hook.Handler)
		srv.Register(path, hook)
	}
	register(PathResourceBinding, admission.WithValidator[*workv1.ResourceBinding](scheme, bindingValidator{opts: opts}))
	register(PathClusterResourceBinding, admission.WithValidator[*workv1.ClusterResourceBinding](scheme, clusterBindingValidator{opts: opts}))
	register(PathWork, admission.WithValidator[*workv1.Work](scheme, workValidator{opts: opts}))
	register(PathCluster, admission.WithValidator(scheme, clusterValidator{opts: opts}))
	register(PathPropagationPolicy, admission.WithValidator(scheme, validator[*policyv1.PropagationPolicy]{
		gk:   policyv1.GroupVersion.WithKind("PropagationPolicy").GroupKind(),
		name: func(p *policyv1.PropagationPolicy) string { return p.Name },
		// The controllers run the same check (hoststore).
		validate: (*policyv1.PropagationPolicy).Validate,
	}))
	register(PathClusterPropagationPolicy, admission.WithValidator(scheme, validator[*policyv1.ClusterPropagationPolicy]{
		gk:   policyv1.GroupVersion.WithKind("ClusterPropagationPolicy").GroupKind(),
		name: func(p *policyv1.ClusterPropagationPolicy) string { return p.Name },
		// The controllers run the same check (hoststore).
		validate: (*policyv1.ClusterPropagationPolicy).Validate,
	}))
	register(PathOverridePolicy, admission.WithValidator(scheme, validator[*policyv1.OverridePolicy]{
		gk:   policyv1.GroupVersion.WithKind("OverridePolicy").GroupKind(),
		name: func(p *policyv1.OverridePolicy) string { return p.Name },
		// The controllers run the same check (hoststore).
		validate: (*policyv1.OverridePolicy).Validate,
	}))
	register(PathResourceInterpreterCustomization, admission.WithValidator(scheme, validator[*configv1.ResourceInterpreterCustomization]{
		gk:   configv1.GroupVersion.WithKind(api.KindResourceInterpreterCustomization).GroupKind(),
		name: func(r *configv1.ResourceInterpreterCustomization) string { return r.Name },
		validate: func(r *configv1.ResourceInterpreterCustomization) field.ErrorList {
			e := r.Engine()
			return interpret.Validate(&e)
		},
	}))
	register(PathFederatedResourceQuota, admission.WithValidator(scheme, validator[*policyv1.FederatedResourceQuota]{
		gk:   policyv1.GroupVersion.WithKind(api.KindFederatedResourceQuota).GroupKind(),
		name: func(q *policyv1.FederatedResourceQuota) string { return q.Name },
		// The quota controller and the scheduler run the same check.
		validate: (*policyv1.FederatedResourceQuota).Validate,
	}))
	register(PathFederatedHPA, admission.WithValidator(scheme, validator[*autoscalingv1.FederatedHPA]{
		gk:       autoscalingv1.GroupVersion.WithKind(api.KindFederatedHPA).GroupKind(),
		name:     func(h *autoscalingv1.FederatedHPA) string { return h.Name },
		validate: (*autoscalingv1.FederatedHPA).Validate,
	}))
	register(PathCronFederatedHPA, admission.WithValidator(scheme, validator[*autoscalingv1.CronFederatedHPA]{
		gk:   autoscalingv1.GroupVersion.WithKind(api.KindCronFederatedHPA).GroupKind(),
		name: func(c *autoscalingv1.CronFederatedHPA) string { return c.Name },
		// The CronFederatedHPA controller reads the schedule and time zone
		// with the same functions and records a rule it cannot read as a
		// failed execution.
		validate: (*autoscalingv1.CronFederatedHPA).Validate,
	}))
	register(PathMultiClusterService, admission.WithValidator(scheme, validator[*networkingv1.MultiClusterService]{
		gk:   networkingv1.GroupVersion.WithKind(api.KindMultiClusterService).GroupKind(),
		name: func(m *networkingv1.MultiClusterService) string { return m.Name },
		// The mcs controller runs the same check and serves nothing of an
		// invalid one.
		validate: (*networkingv1.MultiClusterService).Validate,
	}))
	register(PathClusterOverridePolicy, admission.WithValidator(scheme, validator[*policyv1.ClusterOverridePolicy]{
		gk:   policyv1.GroupVersion.WithKind("ClusterOverridePolicy").GroupKind(),
		name: func(p *policyv1.ClusterOverridePolicy) string { return p.Name },
		// The controllers run the same check (hoststore).
		validate: (*policyv1.ClusterOverridePolicy).Validate,
	}))
}
