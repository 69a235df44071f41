package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// FinalizerExecution holds a binding until its objects are removed from members.
const FinalizerExecution = "flotilla.io/execution"

// ConditionFullyApplied is the binding condition the execution reconciler sets.
const ConditionFullyApplied = "FullyApplied"

// executionReconciler renders a binding, applies it to its clusters, prunes
// the clusters it left and reports health.
type executionReconciler struct {
	client   client.Client
	executor *execution.Executor
	opts     Options
	now      func() time.Time
}

func (e *executionReconciler) setup(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("execution").
		For(&workv1.ResourceBinding{}).
		Watches(&policyv1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(allBindings(e.client))).
		Watches(&policyv1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(allBindings(e.client)))
	for _, gvk := range e.opts.TemplateKinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		kind := gvk.Kind
		b = b.Watches(u, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: BindingName(kind, obj.GetName())}}}
		}))
	}
	return b.Complete(e)
}

// Reconcile makes the members match one binding.
func (e *executionReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	if err := e.client.Get(ctx, req.NamespacedName, &rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !rb.DeletionTimestamp.IsZero() {
		return e.remove(ctx, &rb)
	}
	if controllerutil.AddFinalizer(&rb, FinalizerExecution) {
		if err := e.client.Update(ctx, &rb); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to binding %s: %w", req, err)
		}
	}
	tmpl, err := e.template(ctx, &rb)
	if err != nil || tmpl == nil {
		return reconcile.Result{}, err
	}
	works, err := e.render(ctx, &rb, tmpl)
	if err != nil {
		return e.renderFailed(ctx, &rb, fmt.Errorf("render: %w", err))
	}
	ref := render.TemplateRefOf(tmpl)
	applyReq := execution.ApplyRequest{
		Template:                    ref,
		Objects:                     make(map[string]*unstructured.Unstructured, len(works)),
		ConflictResolution:          rb.Spec.ConflictResolution,
		PreserveResourcesOnDeletion: rb.Spec.PreserveResourcesOnDeletion != nil && *rb.Spec.PreserveResourcesOnDeletion,
	}
	for cluster, w := range works {
		applyReq.Objects[cluster] = w.Object
	}
	var kept []string
	for _, cluster := range appliedClusters(&rb) {
		_, placed := applyReq.Objects[cluster]
		switch {
		case placed:
		case evicting(&rb, cluster):
			// Graceful eviction: the old copy stays, untouched, until its
			// task is over.
			kept = append(kept, cluster)
		default:
			applyReq.Prune = append(applyReq.Prune, cluster)
		}
	}
	result := e.executor.Apply(ctx, applyReq)
	return e.writeStatus(ctx, &rb, tmpl, applyReq, result, kept)
}

// evicting reports whether the binding has a graceful eviction task for cluster.
func evicting(rb *workv1.ResourceBinding, cluster string) bool {
	return slices.ContainsFunc(rb.Spec.GracefulEvictionTasks, func(t api.GracefulEvictionTask) bool { return t.FromCluster == cluster })
}

// template reads the binding's template; nil when it is gone (the detector
// then deletes the binding).
func (e *executionReconciler) template(ctx context.Context, rb *workv1.ResourceBinding) (*unstructured.Unstructured, error) {
	r := rb.Spec.Resource
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind))
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, u); err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read template %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	return u, nil
}

// render renders the template for each scheduled cluster, with the override
// policies that match it.
func (e *executionReconciler) render(ctx context.Context, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured) (map[string]render.Work, error) {
	if len(rb.Spec.Clusters) == 0 {
		return nil, nil
	}
	var ops policyv1.OverridePolicyList
	if err := e.client.List(ctx, &ops, client.InNamespace(tmpl.GetNamespace())); err != nil {
		return nil, fmt.Errorf("list override policies: %w", err)
	}
	var cops policyv1.ClusterOverridePolicyList
	if err := e.client.List(ctx, &cops); err != nil {
		return nil, fmt.Errorf("list cluster override policies: %w", err)
	}
	op := make([]api.OverridePolicy, len(ops.Items))
	for i, p := range ops.Items {
		op[i] = api.OverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	cop := make([]api.ClusterOverridePolicy, len(cops.Items))
	for i, p := range cops.Items {
		cop[i] = api.ClusterOverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	targets := make([]render.Target, 0, len(rb.Spec.Clusters))
	for _, tc := range rb.Spec.Clusters {
		var cl clusterv1.Cluster
		if err := e.client.Get(ctx, client.ObjectKey{Name: tc.Name}, &cl); err != nil {
			return nil, fmt.Errorf("read cluster %s: %w", tc.Name, err)
		}
		c := cl.Engine()
		targets = append(targets, render.Target{Cluster: &c, Replicas: tc.Replicas})
	}
	scheduling := api.ReplicaSchedulingTypeDuplicated
	if p := rb.Spec.Placement; p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType != "" {
		scheduling = p.ReplicaScheduling.ReplicaSchedulingType
	}
	return render.Render(render.Input{
		Template:          tmpl,
		Clusters:          targets,
		Overrides:         policy.MatchOverrides(tmpl, op, cop),
		Fleet:             e.opts.Fleet,
		ReplicaScheduling: scheduling,
	})
}

// appliedClusters are the clusters where the binding's object may exist:
// every cluster its status reports on. It is the record pruning works from.
func appliedClusters(rb *workv1.ResourceBinding) []string {
	var out []string
	for _, item := range rb.Status.AggregatedStatus {
		out = append(out, item.ClusterName)
	}
	return out
}

// remove deletes (or releases) the binding's objects in every cluster it
// reached, then lets the binding go.
func (e *executionReconciler) remove(ctx context.Context, rb *workv1.ResourceBinding) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(rb, FinalizerExecution) {
		return reconcile.Result{}, nil
	}
	if clusters := appliedClusters(rb); len(clusters) > 0 {
		r := rb.Spec.Resource
		ref := render.TemplateRef{Group: schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).Group, Version: schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		result := e.executor.Delete(ctx, execution.DeleteRequest{
			Template:                    ref,
			Clusters:                    clusters,
			PreserveResourcesOnDeletion: rb.Spec.PreserveResourcesOnDeletion != nil && *rb.Spec.PreserveResourcesOnDeletion,
		})
		if err := result.Err(); err != nil {
			ctrl.LoggerFrom(ctx).Info("removal from members incomplete; retrying", "binding", client.ObjectKeyFromObject(rb).String(), "reason", err.Error())
			return reconcile.Result{RequeueAfter: e.opts.Resync}, nil
		}
	}
	controllerutil.RemoveFinalizer(rb, FinalizerExecution)
	if err := e.client.Update(ctx, rb); err != nil && !isNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("remove finalizer from binding %s: %w", client.ObjectKeyFromObject(rb), err)
	}
	return reconcile.Result{}, nil
}

// reflect writes the aggregated status into the template's .status, as
// Karmada does for the kinds it aggregates (Deployments among them).
func (e *executionReconciler) reflect(ctx context.Context, tmpl *unstructured.Unstructured, agg health.Aggregated) error {
	if agg.Status == nil {
		return nil
	}
	current, _, _ := unstructured.NestedMap(tmpl.Object, "status")
	want := runtime.DeepCopyJSON(agg.Status)
	if equality.Semantic.DeepEqual(current, want) {
		return nil
	}
	updated := tmpl.DeepCopy()
	updated.Object["status"] = want
	if err := e.client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("write status of template %s: %w", render.TemplateRefOf(tmpl), err)
	}
	return nil
}
