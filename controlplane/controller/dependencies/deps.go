package dependencies

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// Field indexes of ResourceBindings kept by the distributor.
const (
	// indexRequiredBy lists "<namespace>/<name>" of each requiredBy entry.
	indexRequiredBy = "spec.requiredBy"
	// indexPropagateDeps is "true" on bindings with propagateDeps.
	indexPropagateDeps = "spec.propagateDeps"
)

// dependenciesDistributor is Karmada's dependencies distributor. It is
// driven by the workload bindings: for one with propagateDeps, every
// dependency its template refers to (interpret.GetDependencies) that exists on the
// host gets an attached binding <name>-<kind> whose spec.requiredBy lists
// the workload bindings that need it and whose spec.clusters is the union of
// their clusters. The attached binding has no placement, so the scheduler
// leaves it alone, and the binding controller renders it like any other. A
// workload that no longer needs a dependency (it moved, dropped the
// reference or propagateDeps, or is gone) is removed from requiredBy; an
// attached binding left with no requiredBy is deleted, which removes the
// dependency from the members. A dependency claimed by a policy of its own
// keeps its own binding and is not attached.
type dependenciesDistributor struct {
	client client.Client
	opts   shared.Options
}

func (d *dependenciesDistributor) setup(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &workv1.ResourceBinding{}, indexRequiredBy, func(obj client.Object) []string {
		rb := obj.(*workv1.ResourceBinding)
		out := make([]string, 0, len(rb.Spec.RequiredBy))
		for _, s := range rb.Spec.RequiredBy {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	}); err != nil {
		return fmt.Errorf("index bindings by requiredBy: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1.ResourceBinding{}, indexPropagateDeps, func(obj client.Object) []string {
		if obj.(*workv1.ResourceBinding).Spec.PropagateDeps {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index bindings by propagateDeps: %w", err)
	}
	bld := ctrl.NewControllerManagedBy(mgr).Named("dependencies-distributor").
		Watches(&workv1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(d.bindingEvent))
	for _, kind := range d.opts.DependencyKinds() {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
		bld = bld.Watches(m, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return d.workloads(ctx, obj.GetNamespace())
		}), builder.OnlyMetadata)
	}
	return bld.Complete(d)
}

// bindingEvent maps a binding to the workload bindings to look at: an
// attached binding to the workloads it lists (so that one whose workload went
// while no control plane ran is cleaned up at start), any other binding to
// itself, and the binding of a dependency kind also to the namespace's
// workloads, which attach the dependency once its own binding is gone.
func (d *dependenciesDistributor) bindingEvent(ctx context.Context, obj client.Object) []reconcile.Request {
	rb, ok := obj.(*workv1.ResourceBinding)
	if !ok {
		return nil
	}
	if shared.Attached(rb) {
		out := make([]reconcile.Request, 0, len(rb.Spec.RequiredBy))
		for _, s := range rb.Spec.RequiredBy {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: s.Namespace, Name: s.Name}})
		}
		return out
	}
	out := []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(rb)}}
	if r := rb.Spec.Resource; r.APIVersion == "v1" && slices.Contains(d.opts.DependencyKinds(), r.Kind) {
		out = append(out, d.workloads(ctx, rb.Namespace)...)
	}
	return out
}

// workloads lists the bindings with propagateDeps in namespace.
func (d *dependenciesDistributor) workloads(ctx context.Context, namespace string) []reconcile.Request {
	var list workv1.ResourceBindingList
	if err := d.client.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{indexPropagateDeps: "true"}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list bindings with propagateDeps", "namespace", namespace)
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return out
}

// Reconcile brings every attached binding in step with one workload binding:
// its entry in requiredBy is added, updated or removed.
func (d *dependenciesDistributor) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	err := d.client.Get(ctx, req.NamespacedName, &rb)
	if err != nil && !shared.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read binding %s: %w", req, err)
	}
	if err == nil && !rb.DeletionTimestamp.IsZero() {
		// The workload is still being removed from the members; its
		// dependencies follow once the binding is gone.
		return reconcile.Result{}, nil
	}
	var needs map[string]*metav1.PartialObjectMetadata
	var snap *api.BindingSnapshot
	// A binding flotilla would refuse (another namespace's template, a
	// kind that is not a template kind) needs nothing: its template is
	// never read.
	if err == nil && rb.Spec.PropagateDeps && !shared.Attached(&rb) && len(shared.ValidateResourceBinding(&rb, d.opts)) == 0 {
		needs, err = d.dependencies(ctx, &rb)
		if err != nil {
			return reconcile.Result{}, err
		}
		s := shared.SnapshotOf(&rb)
		snap = &s
	}
	var listed workv1.ResourceBindingList
	if err := d.client.List(ctx, &listed, client.InNamespace(req.Namespace), client.MatchingFields{indexRequiredBy: req.String()}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list bindings required by %s: %w", req, err)
	}
	names := make([]string, 0, len(needs)+len(listed.Items))
	for name := range needs {
		names = append(names, name)
	}
	for i := range listed.Items {
		if !slices.Contains(names, listed.Items[i].Name) {
			names = append(names, listed.Items[i].Name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		var s *api.BindingSnapshot
		if needs[name] != nil {
			s = snap
		}
		if err := d.attach(ctx, client.ObjectKey{Namespace: req.Namespace, Name: name}, needs[name], req.NamespacedName, s); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// dependencies reads the workload's template and returns the dependencies
// that exist on the host, by the name of their binding.
func (d *dependenciesDistributor) dependencies(ctx context.Context, rb *workv1.ResourceBinding) (map[string]*metav1.PartialObjectMetadata, error) {
	r := rb.Spec.Resource
	tmpl, err := shared.ReadTemplate(ctx, d.client, rb)
	if shared.IsRefused(err) {
		// The binding controller refuses the binding; it requires nothing.
		return nil, nil
	}
	if err != nil || tmpl == nil {
		// A template gone: the detector or the orphan collector deletes
		// the binding.
		return nil, err
	}
	in, err := d.opts.Interpreters().Load(ctx, d.client)
	if err != nil {
		return nil, err
	}
	deps, err := in.GetDependencies(tmpl)
	if err != nil {
		// The template cannot change by itself; its next edit brings the
		// binding back, and meanwhile it needs nothing.
		ctrl.LoggerFrom(ctx).Info("template dependencies cannot be read", "template", r.Kind+" "+r.Namespace+"/"+r.Name, "reason", err.Error())
		return nil, nil
	}
	out := make(map[string]*metav1.PartialObjectMetadata, len(deps))
	follows := d.opts.DependencyKinds()
	for _, dep := range deps {
		if !slices.Contains(follows, dep.Kind) {
			continue // a Secret, when the control plane reads Secrets of flotilla-system only
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: dep.Kind})
		err := d.client.Get(ctx, client.ObjectKey{Namespace: dep.Namespace, Name: dep.Name}, m)
		switch {
		case shared.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("read dependency %s %s/%s of binding %s: %w", dep.Kind, dep.Namespace, dep.Name, client.ObjectKeyFromObject(rb), err)
		}
		if m.DeletionTimestamp.IsZero() {
			// The cache may hand the object back without its kind.
			m.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: dep.Kind})
			out[hoststore.BindingName(schema.GroupKind{Kind: dep.Kind}, dep.Name)] = m
		}
	}
	return out, nil
}

// attach sets (snap non-nil) or removes (snap nil) the workload's entry in
// the attached binding key of dependency dep, creating the binding or
// deleting it when no workload is left. A binding that is not attached (the
// dependency's own, or one being deleted) is left alone.
func (d *dependenciesDistributor) attach(ctx context.Context, key client.ObjectKey, dep *metav1.PartialObjectMetadata, workload client.ObjectKey, snap *api.BindingSnapshot) error {
	var rb workv1.ResourceBinding
	err := d.client.Get(ctx, key, &rb)
	switch {
	case shared.IsNotFound(err):
		if snap == nil {
			return nil
		}
		rb = workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	case err != nil:
		return fmt.Errorf("read binding %s: %w", key, err)
	case !shared.Attached(&rb) || !rb.DeletionTimestamp.IsZero():
		return nil
	}
	requiredBy := nextRequiredBy(rb.Spec.RequiredBy, workload, snap)
	if len(requiredBy) == 0 {
		// The preconditions keep a binding taken over or updated meanwhile.
		if err := d.client.Delete(ctx, &rb, client.Preconditions{UID: &rb.UID, ResourceVersion: &rb.ResourceVersion}); err != nil && !shared.IsNotFound(err) {
			return fmt.Errorf("delete attached binding %s no workload requires: %w", key, err)
		}
		return nil
	}
	orig := rb.DeepCopy()
	if rb.Labels == nil {
		rb.Labels = map[string]string{}
	}
	rb.Labels[shared.LabelAttached] = "true"
	s := &rb.Spec
	if dep != nil {
		// The resource version brings the binding controller back when the
		// dependency changes: it renders the Works again.
		s.Resource = api.ObjectReference{APIVersion: "v1", Kind: dep.Kind, Namespace: dep.Namespace, Name: dep.Name, UID: dep.UID, ResourceVersion: dep.ResourceVersion}
	}
	s.RequiredBy, s.Clusters = requiredBy, shared.DependentClusters(requiredBy)
	if rb.ResourceVersion == "" {
		if err := d.client.Create(ctx, &rb); err != nil {
			return fmt.Errorf("create attached binding %s for %s: %w", key, workload, err)
		}
		return nil
	}
	if equalSpecAndLabels(orig, &rb) {
		return nil
	}
	// Several workloads share a dependency: the stored version guards the
	// other workloads' entries.
	if err := d.client.Update(ctx, &rb); err != nil {
		return fmt.Errorf("update attached binding %s for %s: %w", key, workload, err)
	}
	return nil
}

func equalSpecAndLabels(a, b *workv1.ResourceBinding) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) && equality.Semantic.DeepEqual(a.Labels, b.Labels)
}

// nextRequiredBy replaces the workload's entry in requiredBy with snap, or
// removes it when snap is nil. The result is sorted by namespace and name,
// so an unchanged set is written the same way.
func nextRequiredBy(requiredBy []api.BindingSnapshot, workload client.ObjectKey, snap *api.BindingSnapshot) []api.BindingSnapshot {
	out := make([]api.BindingSnapshot, 0, len(requiredBy)+1)
	for _, s := range requiredBy {
		if s.Namespace != workload.Namespace || s.Name != workload.Name {
			out = append(out, s)
		}
	}
	if snap != nil {
		out = append(out, *snap)
	}
	slices.SortFunc(out, func(a, b api.BindingSnapshot) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
