package namespacesync

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// namespaceSync is Karmada's namespace sync controller: every host
// namespace that SyncsNamespace admits gets a Work in every Cluster's
// execution namespace, carrying the namespace with its labels and
// annotations and the ClusterOverridePolicies that select it; the execution
// controller applies it like any Work (ownership, conflict refusal, status,
// removal). A deleted host namespace has its Works deleted, which removes
// the member namespace only where flotilla created it.
type namespaceSync struct {
	client client.Client
	opts   shared.Options
}

func (s *namespaceSync) setup(mgr ctrl.Manager) error {
	allNamespaces := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list corev1.NamespaceList
		if err := s.client.List(ctx, &list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list namespaces")
			return nil
		}
		out := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			out[i] = reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}}
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).Named("namespace-sync").
		For(&corev1.Namespace{}).
		// A new member gets every namespace.
		Watches(&clusterv1.Cluster{}, allNamespaces, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return true },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Watches(&policyv1.ClusterOverridePolicy{}, allNamespaces, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A Work deleted or edited by hand is written back.
		Watches(&workv1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			if name := obj.GetLabels()[shared.LabelNamespaceSyncName]; name != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
			}
			return nil
		})).
		Complete(s)
}

// Reconcile writes one namespace's Works, or deletes them when the
// namespace is gone.
func (s *namespaceSync) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var ns corev1.Namespace
	err := s.client.Get(ctx, req.NamespacedName, &ns)
	switch {
	case shared.IsNotFound(err):
		return reconcile.Result{}, s.deleteWorks(ctx, req.Name)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("read namespace %s: %w", req.Name, err)
	case !ns.DeletionTimestamp.IsZero():
		return reconcile.Result{}, s.deleteWorks(ctx, req.Name)
	}
	if ok, _ := shared.SyncsNamespace(&ns, s.opts); !ok {
		// As in Karmada, a namespace labelled to skip after it was synced
		// stays in the members it reached: removing it would delete
		// everything in it.
		return reconcile.Result{}, nil
	}
	var clusters clusterv1.ClusterList
	if err := s.client.List(ctx, &clusters); err != nil {
		return reconcile.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	_, cops, invalid, err := hoststore.OverridePolicies(ctx, s.client, "")
	if err != nil {
		return reconcile.Result{}, err
	}
	existing, err := s.works(ctx, ns.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	tmpl, err := shared.NamespaceTemplate(&ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	if p := hoststore.HeldBy(invalid, tmpl); p != nil {
		// Its Works stay as last written; the policy's watch brings the
		// namespace back once it is fixed.
		ctrl.LoggerFrom(ctx).Info("namespace not synced", "namespace", ns.Name, "reason", p.Message())
		return reconcile.Result{}, nil
	}
	overrides := policy.MatchOverrides(tmpl, nil, cops)
	var errs []error
	for i := range clusters.Items {
		cl := &clusters.Items[i]
		if !cl.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.sync(ctx, &ns, tmpl, cl, overrides, existing); err != nil {
			errs = append(errs, err)
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// sync writes the Work of one namespace for one cluster when it is missing
// or differs.
func (s *namespaceSync) sync(ctx context.Context, ns *corev1.Namespace, tmpl *unstructured.Unstructured, cl *clusterv1.Cluster, overrides []policy.AppliedOverride, existing []workv1.Work) error {
	e := cl.Engine()
	rendered, err := render.Render(render.Input{
		Template:  tmpl,
		Clusters:  []render.Target{{Cluster: &e}},
		Overrides: overrides,
		Fleet:     s.opts.WithDefaults().Fleet,
	})
	if err != nil {
		return fmt.Errorf("sync namespace %s to cluster %s: %w", ns.Name, cl.Name, err)
	}
	want, err := shared.NewNamespaceWork(ns, rendered[cl.Name])
	if err != nil {
		return fmt.Errorf("sync namespace %s to cluster %s: %w", ns.Name, cl.Name, err)
	}
	if err := shared.EnsureExecutionSpaces(ctx, s.client, []api.TargetCluster{{Name: cl.Name}}); err != nil {
		return fmt.Errorf("sync namespace %s to cluster %s: %w", ns.Name, cl.Name, err)
	}
	i := slices.IndexFunc(existing, func(w workv1.Work) bool { return w.Namespace == want.Namespace && w.Name == want.Name })
	if i < 0 {
		var have workv1.Work
		err := s.client.Get(ctx, client.ObjectKeyFromObject(want), &have)
		switch {
		case shared.IsNotFound(err):
			if err := s.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create work %s/%s of namespace %s: %w", want.Namespace, want.Name, ns.Name, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("read work %s/%s of namespace %s: %w", want.Namespace, want.Name, ns.Name, err)
		}
		existing = append(existing, have)
		i = len(existing) - 1
	}
	have := &existing[i]
	if !have.DeletionTimestamp.IsZero() {
		// Created again once the execution controller lets it go; its
		// deletion brings the namespace back here.
		return nil
	}
	if _, ok := shared.BindingOfWork(have); ok {
		// A policy that claims the namespace propagates it through a
		// binding of its own; the sync leaves that Work to it.
		return nil
	}
	merged, changed := shared.MergeWork(have, want)
	if !changed {
		return nil
	}
	if err := s.client.Update(ctx, merged); err != nil {
		return fmt.Errorf("update work %s/%s of namespace %s: %w", merged.Namespace, merged.Name, ns.Name, err)
	}
	return nil
}

// works lists the Works of the namespace called name.
func (s *namespaceSync) works(ctx context.Context, name string) ([]workv1.Work, error) {
	var list workv1.WorkList
	if err := s.client.List(ctx, &list, client.MatchingLabels{shared.LabelNamespaceSyncName: name}); err != nil {
		return nil, fmt.Errorf("list works of namespace %s: %w", name, err)
	}
	return list.Items, nil
}

// deleteWorks deletes the Works of a namespace that is gone or going; the
// execution controller removes each member namespace flotilla created and
// leaves the others alone.
func (s *namespaceSync) deleteWorks(ctx context.Context, name string) error {
	works, err := s.works(ctx, name)
	if err != nil {
		return err
	}
	for i := range works {
		w := &works[i]
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !shared.IsNotFound(err) {
			return fmt.Errorf("delete work %s/%s of namespace %s: %w", w.Namespace, w.Name, name, err)
		}
	}
	return nil
}
