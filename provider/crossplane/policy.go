package crossplane

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// specObject describes how one managed resource kind maps onto a host kind
// that is all spec: a policy. M is the managed resource, H the host object.
type specObject[M resource.ModernManaged, H client.Object] struct {
	kind string
	// group is the host kind's group version, read at each use because
	// apis.Use sets it in place for Karmada's groups; nil is the policy
	// group's.
	group    *schema.GroupVersion
	newHost  func() H
	desired  func(M) any
	liveSpec func(H) any
	// observe fills the managed resource's status.atProvider.
	observe func(ctx context.Context, h *host, mg M, live H) error
	// validate checks spec.forProvider as the host's webhook does, so a
	// bad field is named even where no webhook runs; nil checks nothing.
	validate func(mg M) field.ErrorList
	// refuseUnowned, when set, refuses a host object no managed resource
	// owns, saying why and what to do; nil adopts it.
	refuseUnowned error
}

// specClient is the external client of a specObject kind.
type specClient[M resource.ModernManaged, H client.Object] struct {
	specObject[M, H]
	host *host
}

func (s *specClient[M, H]) key(mg M) client.ObjectKey {
	return client.ObjectKey{Namespace: mg.GetNamespace(), Name: externalName(mg)}
}

func (s *specClient[M, H]) what(mg M) string {
	return fmt.Sprintf("%s %s", s.kind, s.key(mg))
}

// desiredObject is the host object as the provider applies it.
func (s *specClient[M, H]) desiredObject(mg M) (*unstructured.Unstructured, error) {
	spec, err := toUnstructured(s.desired(mg))
	if err != nil {
		return nil, fmt.Errorf("encode spec.forProvider of %s: %w", s.what(mg), err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	gv := policyv1.GroupVersion
	if s.group != nil {
		gv = *s.group
	}
	u.SetGroupVersionKind(gv.WithKind(s.kind))
	key := s.key(mg)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	if err := stamp(u, s.kind, mg); err != nil {
		return nil, err
	}
	return u, nil
}

// Observe reads the host object: it exists, is owned by mg and is up to
// date when its spec equals spec.forProvider and it carries the hash of
// what mg would apply.
func (s *specClient[M, H]) Observe(ctx context.Context, mg M) (managed.ExternalObservation, error) {
	live := s.newHost()
	if err := s.host.client.Get(ctx, s.key(mg), live); err != nil {
		if apierrors.IsNotFound(err) {
			return managed.ExternalObservation{}, nil
		}
		return managed.ExternalObservation{}, fmt.Errorf("read %s in the host: %w", s.what(mg), err)
	}
	// A policy sits in the managed resource's own namespace, where its
	// author may write policies anyway: an unowned one is adopted.
	if done, err := ownedOrGone(live, s.what(mg), s.kind, mg, s.refuseUnowned); done || err != nil {
		return managed.ExternalObservation{}, err
	}
	if s.observe != nil {
		if err := s.observe(ctx, s.host, mg, live); err != nil {
			return managed.ExternalObservation{}, err
		}
	}
	desired, err := s.desiredObject(mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.SetConditions(xpv2.Available())
	upToDate := live.GetAnnotations()[AnnotationDesiredHash] == desired.GetAnnotations()[AnnotationDesiredHash] &&
		equality.Semantic.DeepEqual(s.desired(mg), s.liveSpec(live))
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// Create applies the host object.
func (s *specClient[M, H]) Create(ctx context.Context, mg M) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, s.apply(ctx, mg)
}

// Update applies the host object.
func (s *specClient[M, H]) Update(ctx context.Context, mg M) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, s.apply(ctx, mg)
}

func (s *specClient[M, H]) apply(ctx context.Context, mg M) error {
	if s.validate != nil {
		if errs := s.validate(mg); len(errs) > 0 {
			return fmt.Errorf("%s is invalid: %w", s.what(mg), errs.ToAggregate())
		}
	}
	desired, err := s.desiredObject(mg)
	if err != nil {
		return err
	}
	mg.SetConditions(xpv2.Creating())
	if err := apply(ctx, s.host.client, desired); err != nil {
		return fmt.Errorf("apply %s to the host: %w", s.what(mg), err)
	}
	return nil
}

// Delete deletes the host object if mg owns it.
func (s *specClient[M, H]) Delete(ctx context.Context, mg M) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, deleteOwned(ctx, s.host.client, s.key(mg), s.newHost(), s.what(mg), s.kind, mg)
}

// Disconnect is a no-op: host clients are cached and shared.
func (s *specClient[M, H]) Disconnect(context.Context) error { return nil }

// propagationPolicyKind maps PropagationPolicy managed resources onto the
// host's policy.flotilla.io PropagationPolicy.
var propagationPolicyKind = specObject[*v1alpha1.PropagationPolicy, *policyv1.PropagationPolicy]{
	kind:     "PropagationPolicy",
	newHost:  func() *policyv1.PropagationPolicy { return &policyv1.PropagationPolicy{} },
	desired:  func(mg *v1alpha1.PropagationPolicy) any { return mg.Spec.ForProvider },
	liveSpec: func(h *policyv1.PropagationPolicy) any { return h.Spec },
	validate: func(mg *v1alpha1.PropagationPolicy) field.ErrorList {
		return api.ValidatePropagationSpec(&mg.Spec.ForProvider, field.NewPath("spec", "forProvider"))
	},
	observe: func(ctx context.Context, h *host, mg *v1alpha1.PropagationPolicy, live *policyv1.PropagationPolicy) error {
		templates, err := claimedTemplates(ctx, h.client, live.Namespace, "PropagationPolicy."+live.Name)
		if err != nil {
			return err
		}
		mg.Status.AtProvider.Templates = templates
		return nil
	},
}

// overridePolicyKind maps OverridePolicy managed resources onto the host's
// policy.flotilla.io OverridePolicy.
var overridePolicyKind = specObject[*v1alpha1.OverridePolicy, *policyv1.OverridePolicy]{
	kind:     "OverridePolicy",
	newHost:  func() *policyv1.OverridePolicy { return &policyv1.OverridePolicy{} },
	desired:  func(mg *v1alpha1.OverridePolicy) any { return mg.Spec.ForProvider },
	liveSpec: func(h *policyv1.OverridePolicy) any { return h.Spec },
	observe: func(_ context.Context, _ *host, mg *v1alpha1.OverridePolicy, live *policyv1.OverridePolicy) error {
		mg.Status.AtProvider.Rules = len(live.Spec.OverrideRules)
		return nil
	},
}

// federatedResourceQuotaKind maps FederatedResourceQuota managed resources
// onto the host's policy.flotilla.io FederatedResourceQuota. A quota is a
// tenant's limit, so an existing one is never adopted: a managed resource
// that could take over the quota its namespace already has would let
// whoever writes it there rewrite the limit.
var federatedResourceQuotaKind = specObject[*v1alpha1.FederatedResourceQuota, *policyv1.FederatedResourceQuota]{
	kind:     api.KindFederatedResourceQuota,
	newHost:  func() *policyv1.FederatedResourceQuota { return &policyv1.FederatedResourceQuota{} },
	desired:  func(mg *v1alpha1.FederatedResourceQuota) any { return mg.Spec.ForProvider },
	liveSpec: func(h *policyv1.FederatedResourceQuota) any { return h.Spec },
	validate: func(mg *v1alpha1.FederatedResourceQuota) field.ErrorList {
		q := api.FederatedResourceQuota{Spec: mg.Spec.ForProvider}
		q.Namespace, q.Name = mg.GetNamespace(), externalName(mg)
		errs := api.ValidateFederatedResourceQuota(&q)
		for _, e := range errs {
			if rest, ok := strings.CutPrefix(e.Field, "spec."); ok {
				e.Field = "spec.forProvider." + rest
			}
		}
		return errs
	},
	observe: func(_ context.Context, _ *host, mg *v1alpha1.FederatedResourceQuota, live *policyv1.FederatedResourceQuota) error {
		mg.Status.AtProvider = v1alpha1.FederatedResourceQuotaObservation{
			Overall: live.Status.Overall, OverallUsed: live.Status.OverallUsed, AggregatedStatus: live.Status.AggregatedStatus,
		}
		return nil
	},
	refuseUnowned: errors.New("a FederatedResourceQuota is never adopted; have a fleet administrator delete it in the host, or give this resource another external name"),
}

// claimedTemplates lists, as "<kind>/<name>", the templates whose binding in
// namespace the policy (hoststore.LabelPolicy value) claims.
func claimedTemplates(ctx context.Context, c client.Client, namespace, policy string) ([]string, error) {
	var list workv1.ResourceBindingList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{hoststore.LabelPolicy: policy}); err != nil {
		return nil, fmt.Errorf("list bindings of %s in namespace %s: %w", strings.Replace(policy, ".", " ", 1), namespace, err)
	}
	out := make([]string, 0, len(list.Items))
	for _, rb := range list.Items {
		out = append(out, rb.Spec.Resource.Kind+"/"+rb.Spec.Resource.Name)
	}
	sort.Strings(out)
	return out, nil
}
