package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Paths of the handlers of flotilla's own work objects.
const (
	PathResourceBinding        = "/validate-resourcebinding"
	PathClusterResourceBinding = "/validate-clusterresourcebinding"
	PathWork                   = "/validate-work"
)

// Options configures the handlers of ResourceBindings and Works.
type Options struct {
	// Controller is the control plane's configuration: its template kinds
	// and reserved namespaces decide which bindings are valid.
	Controller shared.Options
	// ControlPlaneUsers are the user names, as the host authenticates them,
	// that may create and update Works: the control plane's own identity.
	// Works are applied to members with the control plane's credentials,
	// so nobody else writes them. Empty leaves Works open to anyone RBAC
	// lets in (the controllers still refuse the ones that do not belong to
	// a binding); the controlplane command always sets it.
	ControlPlaneUsers []string
	// Secrets reads the credentials Secret a Cluster names, so that its
	// kubeconfig is checked at admission too; nil checks the Cluster alone.
	Secrets client.Reader
	// Mapper is the host's REST mapper: with it, a ResourceBinding naming
	// a cluster-scoped kind (or a ClusterResourceBinding a namespaced one)
	// is refused at admission too; nil leaves that to the controllers.
	Mapper apimeta.RESTMapper
	// Quotas reads FederatedResourceQuotas and the bindings of their
	// namespaces: with it, a ResourceBinding write whose clusters take its
	// namespace over a quota is refused (Forbidden, reason QuotaExceeded),
	// as Karmada's ResourceBinding webhook refuses it; nil leaves that to
	// the scheduler, which never writes such a result.
	Quotas client.Reader
	// MaxInFlight bounds the admission reviews all handlers work on at
	// once; a review beyond it is refused at once with 429 Too Many
	// Requests. 0 means DefaultMaxInFlight.
	MaxInFlight int
}

// validateBinding is shared.ValidateResourceBinding plus the scope
// rule when the host's mapper knows the kind.
func (o Options) validateBinding(rb *workv1.ResourceBinding) field.ErrorList {
	errs := shared.ValidateResourceBinding(rb, o.Controller)
	if o.Mapper == nil || len(errs) > 0 {
		return errs
	}
	gvk := schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind)
	m, err := o.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A kind the host does not serve has no template to propagate.
		return nil
	}
	return shared.ValidateBindingScope(rb, m.Scope.Name() == apimeta.RESTScopeNameNamespace)
}

// bindingValidator refuses a ResourceBinding flotilla would refuse to
// render. An update that leaves the spec alone (a finalizer, a label, a
// binding left over from an older version being deleted) is let through.
type bindingValidator struct{ opts Options }

func (v bindingValidator) check(rb *workv1.ResourceBinding) error {
	if errs := v.opts.validateBinding(rb); len(errs) > 0 {
		return apierrors.NewInvalid(workv1.GroupVersion.WithKind("ResourceBinding").GroupKind(), rb.Name, errs)
	}
	return nil
}

// clusterBindingValidator refuses a ClusterResourceBinding flotilla would
// refuse to render, by the same rules as a ResourceBinding's: the
// controllers hold one as a ResourceBinding without a namespace.
type clusterBindingValidator struct{ opts Options }

func (v clusterBindingValidator) check(crb *workv1.ClusterResourceBinding) error {
	rb := &workv1.ResourceBinding{ObjectMeta: crb.ObjectMeta, Spec: crb.Spec}
	if errs := v.opts.validateBinding(rb); len(errs) > 0 {
		return apierrors.NewInvalid(workv1.GroupVersion.WithKind("ClusterResourceBinding").GroupKind(), crb.Name, errs)
	}
	return nil
}

// ValidateCreate implements admission.CustomValidator: it checks a created object as the engine would.
func (v clusterBindingValidator) ValidateCreate(_ context.Context, crb *workv1.ClusterResourceBinding) (admission.Warnings, error) {
	return nil, v.check(crb)
}

// ValidateUpdate implements admission.CustomValidator: it checks an updated object as the engine would.
func (v clusterBindingValidator) ValidateUpdate(_ context.Context, old, crb *workv1.ClusterResourceBinding) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, crb.Spec) && old.Labels[shared.LabelAttached] == crb.Labels[shared.LabelAttached] {
		return nil, nil
	}
	return nil, v.check(crb)
}

// ValidateDelete implements admission.CustomValidator; deletions are always allowed.
func (v clusterBindingValidator) ValidateDelete(context.Context, *workv1.ClusterResourceBinding) (admission.Warnings, error) {
	return nil, nil
}

// ValidateCreate implements admission.CustomValidator: it checks a created object as the engine would.
func (v bindingValidator) ValidateCreate(ctx context.Context, rb *workv1.ResourceBinding) (admission.Warnings, error) {
	if err := v.check(rb); err != nil {
		return nil, err
	}
	return nil, v.checkQuota(ctx, nil, rb)
}

// ValidateUpdate implements admission.CustomValidator: it checks an updated object as the engine would.
func (v bindingValidator) ValidateUpdate(ctx context.Context, old, rb *workv1.ResourceBinding) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, rb.Spec) && old.Labels[shared.LabelAttached] == rb.Labels[shared.LabelAttached] {
		return nil, nil
	}
	if err := v.check(rb); err != nil {
		return nil, err
	}
	return nil, v.checkQuota(ctx, &old.Spec, rb)
}

// checkQuota refuses a binding whose clusters, coming from previous (nil
// for a new binding), take its namespace over a FederatedResourceQuota.
func (v bindingValidator) checkQuota(ctx context.Context, previous *api.ResourceBindingSpec, rb *workv1.ResourceBinding) error {
	if v.opts.Quotas == nil {
		return nil
	}
	quotas, err := shared.LoadNamespaceQuotas(ctx, v.opts.Quotas, rb)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	over := quotas.ExceededBy(previous, &rb.Spec)
	if over == "" {
		return nil
	}
	forbidden := apierrors.NewForbidden(workv1.GroupVersion.WithResource("resourcebindings").GroupResource(), rb.Name, errors.New("its clusters would exceed "+over))
	forbidden.ErrStatus.Reason = ReasonQuotaExceeded
	return forbidden
}

// ReasonQuotaExceeded is the status reason of a ResourceBinding write
// refused for a FederatedResourceQuota, Karmada's QuotaExceededReason.
const ReasonQuotaExceeded metav1.StatusReason = "QuotaExceeded"

// ValidateDelete implements admission.CustomValidator; deletions are always allowed.
func (v bindingValidator) ValidateDelete(context.Context, *workv1.ResourceBinding) (admission.Warnings, error) {
	return nil, nil
}

// workValidator lets only the control plane write Works, and only Works
// of the shape the binding controller writes.
type workValidator struct{ opts Options }

func (v workValidator) check(ctx context.Context, old, w *workv1.Work) error {
	gk := workv1.GroupVersion.WithKind("Work").GroupKind()
	// An update that leaves the spec, labels and annotations alone (the
	// execution controller, or a Pull cluster's agent, dropping its
	// finalizer) must go through, or such a Work could never be deleted;
	// RBAC decides who may make it.
	if old != nil && equality.Semantic.DeepEqual(old.Spec, w.Spec) && equality.Semantic.DeepEqual(old.Labels, w.Labels) && equality.Semantic.DeepEqual(old.Annotations, w.Annotations) {
		return nil
	}
	if len(v.opts.ControlPlaneUsers) > 0 {
		req, err := admission.RequestFromContext(ctx)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("admission request of work %s/%s: %w", w.Namespace, w.Name, err))
		}
		if user := req.UserInfo.Username; !slices.Contains(v.opts.ControlPlaneUsers, user) {
			return apierrors.NewForbidden(workv1.GroupVersion.WithResource("works").GroupResource(), w.Name,
				fmt.Errorf("works are written only by the flotilla control plane (%v), not by %q: a Work is applied to its member with the control plane's credentials", v.opts.ControlPlaneUsers, user))
		}
	}
	if errs := shared.ValidateWork(w); len(errs) > 0 {
		return apierrors.NewInvalid(gk, w.Name, errs)
	}
	return nil
}

// ValidateCreate implements admission.CustomValidator: it checks a created object as the engine would.
func (v workValidator) ValidateCreate(ctx context.Context, w *workv1.Work) (admission.Warnings, error) {
	return nil, v.check(ctx, nil, w)
}

// ValidateUpdate implements admission.CustomValidator: it checks an updated object as the engine would.
func (v workValidator) ValidateUpdate(ctx context.Context, old, w *workv1.Work) (admission.Warnings, error) {
	return nil, v.check(ctx, old, w)
}

// ValidateDelete implements admission.CustomValidator; deletions are always allowed.
func (v workValidator) ValidateDelete(context.Context, *workv1.Work) (admission.Warnings, error) {
	return nil, nil
}

// Ensure the validators fit controller-runtime's generic interface.
var (
	_ admission.Validator[*workv1.ResourceBinding]        = bindingValidator{}
	_ admission.Validator[*workv1.ClusterResourceBinding] = clusterBindingValidator{}
	_ admission.Validator[*workv1.Work]                   = workValidator{}
)
