package detector

import (
	"context"
	"errors"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// orphanCollector deletes the ResourceBindings whose template is gone. The
// detector deletes a binding when its template's delete event arrives, but a
// template deleted while no control plane ran leaves no event behind, and
// the detector, which is driven by templates, never hears of it again. Every
// binding is looked at once when the control plane starts (and on each spec
// change), so such a binding is found then; its deletion runs the usual
// removal from the members.
type orphanCollector struct {
	client client.Client
	// reader reads the host directly, to confirm a template the cache
	// does not hold before its binding is deleted.
	reader client.Reader
	kinds  *KindRegistry
}

func (o *orphanCollector) setup(mgr ctrl.Manager) error {
	return shared.NewBindingController(mgr, "binding-orphans", builder.WithPredicates(predicate.GenerationChangedPredicate{})).Complete(o)
}

// Reconcile deletes one binding if its template no longer exists. Bindings
// of kinds the detector does not watch are left alone: nothing here can tell
// whether they are wanted.
func (o *orphanCollector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	if err := shared.GetBinding(ctx, o.client, req.NamespacedName, &rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r := rb.Spec.Resource
	gvk := schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	// A binding naming another namespace's template is refused by the
	// binding controller; reading that template here would only tell the
	// binding's writer whether it exists.
	if !rb.DeletionTimestamp.IsZero() || !o.detects(gvk) || r.Namespace != rb.Namespace {
		return reconcile.Result{}, nil
	}
	key := client.ObjectKey{Namespace: r.Namespace, Name: r.Name}
	for _, reader := range []client.Reader{o.client, o.reader} {
		tmpl := &unstructured.Unstructured{}
		tmpl.SetGroupVersionKind(gvk)
		err := reader.Get(ctx, key, tmpl)
		if err == nil {
			return reconcile.Result{}, nil
		}
		if !shared.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("read template %s %s of binding %s: %w", r.Kind, key, req, err)
		}
	}
	// The UID precondition keeps a binding the detector has just created
	// again, for a template of the same name, from being taken with it.
	if err := shared.DeleteBinding(ctx, o.client, &rb, client.Preconditions{UID: &rb.UID}); err != nil && !shared.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("delete binding %s of the deleted template %s %s: %w", req, r.Kind, key, err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted the binding of a template that no longer exists", "binding", req.String(), "template", r.Kind+" "+key.String())
	return reconcile.Result{}, nil
}

// detects reports whether the detector runs for gvk.
func (o *orphanCollector) detects(gvk schema.GroupVersionKind) bool {
	s, ok := o.kinds.lookup(gvk.GroupKind())
	return ok && s.GVK == gvk
}

// collectKind deletes the bindings of a kind the host no longer serves
// (kindRegistry.retire): deleting a CRD deletes its objects, but the watch
// of the kind may end before their deletions arrive, and the detector stops
// with the kind, so their bindings would stay. Each template is read from
// the host first; only one the host says is gone (not found, or its kind
// unknown) has its binding deleted.
func (o *orphanCollector) collectKind(ctx context.Context, gk schema.GroupKind) error {
	bindings, err := shared.ListAllBindings(ctx, o.client)
	if err != nil {
		return err
	}
	var errs []error
	for i := range bindings {
		rb := &bindings[i]
		r := rb.Spec.Resource
		if hoststore.GroupKindOf(r) != gk || !rb.DeletionTimestamp.IsZero() || r.Namespace != rb.Namespace {
			continue
		}
		tmpl := &unstructured.Unstructured{}
		tmpl.SetGroupVersionKind(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind))
		err := o.reader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, tmpl)
		if err == nil || (!shared.IsNotFound(err) && !apimeta.IsNoMatchError(err)) {
			continue
		}
		if err := shared.DeleteBinding(ctx, o.client, rb, client.Preconditions{UID: &rb.UID}); err != nil && !shared.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s of %s %s, whose kind is no longer served: %w", hoststore.BindingRef(rb), r.Kind, r.Name, err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("deleted the binding of a template whose kind is no longer served", "binding", hoststore.BindingRef(rb), "template", r.Kind+" "+r.Name)
	}
	return errors.Join(errs...)
}
