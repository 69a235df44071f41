package policyvalidation

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// invalidPolicyRecheck is how often an invalid policy's event is recorded
// again: an Event lives an hour on a default apiserver, and `kubectl
// describe` must still say why the policy is not acted on after that.
const invalidPolicyRecheck = 10 * time.Minute

// validatedPolicy is a policy kind whose Validate is the webhook's check.
type validatedPolicy interface {
	client.Object
	Validate() field.ErrorList
}

// policyValidation records a Warning event (reason PolicyInvalid) on a
// policy that fails validation, naming each invalid field, the policy and
// its namespace. It only reports: what acting on an invalid policy means
// (nothing is claimed or overridden by it, what it held stays at its last
// valid rendering) is decided where policies are read, in hoststore. It
// exists because the admission webhook is optional: without it, an
// invalid policy is stored and this is the only place that says so.
type policyValidation[P validatedPolicy] struct {
	client client.Client
	kind   string
	newObj func() P
	events shared.Recorder
}

func (v *policyValidation[P]) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("policy-validation-"+strings.ToLower(v.kind)).
		For(v.newObj(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(v)
}

// Reconcile validates one policy.
func (v *policyValidation[P]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := v.newObj()
	if err := v.client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	errs := p.Validate()
	if len(errs) == 0 || !p.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, nil
	}
	invalid := hoststore.InvalidPolicy{Kind: v.kind, Namespace: p.GetNamespace(), Name: p.GetName(), Errs: errs}
	note := invalid.Message() + ": it claims and overrides no template, and templates it claimed or overrode keep their last valid placement and rendering until it is fixed"
	ctrl.LoggerFrom(ctx).Info("policy refused", "policy", invalid.Ref(), "reason", note)
	v.events.Object(p, corev1.EventTypeWarning, api.ReasonPolicyInvalid, "Validate", note)
	return reconcile.Result{RequeueAfter: invalidPolicyRecheck}, nil
}

// Setup registers one policy validation reconciler per policy kind with
// mgr.
func Setup(mgr ctrl.Manager, events shared.Recorder) error {
	c := mgr.GetClient()
	for _, s := range []interface{ setup(ctrl.Manager) error }{
		&policyValidation[*policyv1.PropagationPolicy]{client: c, kind: api.KindPropagationPolicy, events: events,
			newObj: func() *policyv1.PropagationPolicy { return &policyv1.PropagationPolicy{} }},
		&policyValidation[*policyv1.ClusterPropagationPolicy]{client: c, kind: api.KindClusterPropagationPolicy, events: events,
			newObj: func() *policyv1.ClusterPropagationPolicy { return &policyv1.ClusterPropagationPolicy{} }},
		&policyValidation[*policyv1.OverridePolicy]{client: c, kind: api.KindOverridePolicy, events: events,
			newObj: func() *policyv1.OverridePolicy { return &policyv1.OverridePolicy{} }},
		&policyValidation[*policyv1.ClusterOverridePolicy]{client: c, kind: api.KindClusterOverridePolicy, events: events,
			newObj: func() *policyv1.ClusterOverridePolicy { return &policyv1.ClusterOverridePolicy{} }},
	} {
		if err := s.setup(mgr); err != nil {
			return fmt.Errorf("set up policy validation: %w", err)
		}
	}
	return nil
}
