package crossplane

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// multiClusterServiceKind maps MultiClusterService managed resources onto
// the host's MultiClusterService (networking.flotilla.io, or
// networking.karmada.io once apis.Use chose Karmada's groups), which the
// continuous control plane's multi-cluster services controller serves.
// It exposes only the Service of its own namespace and name, and a
// consumer only gets it where the namespace's policies place the Service,
// so, like a policy, an unowned one is adopted.
var multiClusterServiceKind = specObject[*v1alpha1.MultiClusterService, *networkingv1.MultiClusterService]{
	kind:     api.KindMultiClusterService,
	group:    &networkingv1.GroupVersion,
	newHost:  func() *networkingv1.MultiClusterService { return &networkingv1.MultiClusterService{} },
	desired:  func(mg *v1alpha1.MultiClusterService) any { return mg.Spec.ForProvider },
	liveSpec: func(h *networkingv1.MultiClusterService) any { return h.Spec },
	// The host's webhook runs the same rules, but a host without it (the
	// provider reaches a plain apiserver) would store a LoadBalancer
	// exposure the controller then refuses only in status: refuse it here,
	// naming the field, before anything is written.
	validate: func(mg *v1alpha1.MultiClusterService) field.ErrorList {
		m := api.MultiClusterService{Spec: mg.Spec.ForProvider}
		m.Namespace, m.Name = mg.GetNamespace(), externalName(mg)
		return underForProvider(api.ValidateMultiClusterService(&m))
	},
	observe: func(_ context.Context, _ *host, mg *v1alpha1.MultiClusterService, live *networkingv1.MultiClusterService) error {
		mg.Status.AtProvider = *live.Status.DeepCopy()
		return nil
	},
}
