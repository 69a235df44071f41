package federatedquota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
)

// quotaSync writes a FederatedResourceQuota's Works and its status.
type quotaSync struct {
	client client.Client
	opts   shared.Options
	rec    shared.Recorder
}

func (s *quotaSync) setup(mgr ctrl.Manager) error {
	// Every quota of the object's namespace, for a binding's change.
	inNamespace := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return s.quotas(ctx, obj.GetNamespace())
	})
	allQuotas := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return s.quotas(ctx, "")
	})
	return ctrl.NewControllerManagedBy(mgr).Named("federated-resource-quota").
		For(&policyv1.FederatedResourceQuota{}).
		// A new member gets the quotas that assign it.
		Watches(&clusterv1.Cluster{}, allQuotas, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return true },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		// A binding's scheduling result changes overallUsed.
		Watches(&workv1.ResourceBinding{}, inNamespace).
		// A Work's status brings the member's usage; a Work deleted or
		// edited by hand is written back.
		Watches(&workv1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			l := obj.GetLabels()
			if l[shared.LabelQuotaName] == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: l[shared.LabelQuotaNamespace], Name: l[shared.LabelQuotaName]}}}
		})).
		Complete(s)
}

// quotas lists the quotas of namespace ("" for every namespace) as requests.
func (s *quotaSync) quotas(ctx context.Context, namespace string) []reconcile.Request {
	var list policyv1.FederatedResourceQuotaList
	if err := s.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list federatedresourcequotas")
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return out
}

// Reconcile writes one quota's Works and status, or deletes its Works when
// the quota is gone.
func (s *quotaSync) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var q policyv1.FederatedResourceQuota
	err := s.client.Get(ctx, req.NamespacedName, &q)
	switch {
	case shared.IsNotFound(err):
		return reconcile.Result{}, s.prune(ctx, req.NamespacedName, nil)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("read federatedresourcequota %s: %w", req, err)
	case !q.DeletionTimestamp.IsZero():
		return reconcile.Result{}, s.prune(ctx, req.NamespacedName, nil)
	}
	if errs := q.Validate(); len(errs) > 0 {
		// Written while no webhook ran: its Works stay as last written
		// (the execution controller refuses to apply them) until it is
		// fixed.
		s.rec.Object(&q, corev1.EventTypeWarning, api.ReasonPolicyInvalid, "Validate", fmt.Sprintf("FederatedResourceQuota %s is invalid: %v", req, errs.ToAggregate()))
		return reconcile.Result{}, nil
	}
	works, err := s.works(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	var clusters clusterv1.ClusterList
	if err := s.client.List(ctx, &clusters); err != nil {
		return reconcile.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	keep := map[client.ObjectKey]bool{}
	var errs []error
	for _, a := range q.Spec.StaticAssignments {
		i := slices.IndexFunc(clusters.Items, func(c clusterv1.Cluster) bool { return c.Name == a.ClusterName })
		if i < 0 || !clusters.Items[i].DeletionTimestamp.IsZero() {
			// Written once the cluster is registered (its creation brings
			// the quota back).
			continue
		}
		key, err := s.sync(ctx, &q, a.ClusterName, works)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		keep[key] = true
	}
	if err := s.prune(ctx, req.NamespacedName, func(w *workv1.Work) bool {
		return keep[client.ObjectKeyFromObject(w)] && w.Labels[shared.LabelQuotaID] == string(q.UID)
	}); err != nil {
		errs = append(errs, err)
	}
	if err := s.writeStatus(ctx, &q, works); err != nil {
		errs = append(errs, err)
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// sync writes the Work of the quota's assignment to cluster when it is
// missing or differs, and returns its key.
func (s *quotaSync) sync(ctx context.Context, q *policyv1.FederatedResourceQuota, cluster string, existing []workv1.Work) (client.ObjectKey, error) {
	want, err := shared.NewQuotaWork(q, cluster, s.opts.WithDefaults().Fleet)
	if err != nil {
		return client.ObjectKey{}, err
	}
	key := client.ObjectKeyFromObject(want)
	if err := shared.EnsureExecutionSpaces(ctx, s.client, []api.TargetCluster{{Name: cluster}}); err != nil {
		return key, fmt.Errorf("sync federatedresourcequota %s/%s to cluster %s: %w", q.Namespace, q.Name, cluster, err)
	}
	i := slices.IndexFunc(existing, func(w workv1.Work) bool { return client.ObjectKeyFromObject(&w) == key })
	if i < 0 {
		if err := s.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return key, fmt.Errorf("create work %s of federatedresourcequota %s/%s: %w", key, q.Namespace, q.Name, err)
		}
		return key, nil
	}
	have := &existing[i]
	if !have.DeletionTimestamp.IsZero() {
		// Created again once the execution controller lets it go.
		return key, nil
	}
	merged, changed := shared.MergeWork(have, want)
	if !changed {
		return key, nil
	}
	if err := s.client.Update(ctx, merged); err != nil {
		return key, fmt.Errorf("update work %s of federatedresourcequota %s/%s: %w", key, q.Namespace, q.Name, err)
	}
	return key, nil
}

// works lists the Works that carry the quota called key.
func (s *quotaSync) works(ctx context.Context, key client.ObjectKey) ([]workv1.Work, error) {
	var list workv1.WorkList
	if err := s.client.List(ctx, &list, client.MatchingLabels{shared.LabelQuotaNamespace: key.Namespace, shared.LabelQuotaName: key.Name}); err != nil {
		return nil, fmt.Errorf("list works of federatedresourcequota %s: %w", key, err)
	}
	return list.Items, nil
}

// prune deletes the quota's Works that keep does not keep (all of them
// when keep is nil); the execution controller removes each member
// ResourceQuota flotilla created and leaves the others alone.
func (s *quotaSync) prune(ctx context.Context, key client.ObjectKey, keep func(*workv1.Work) bool) error {
	works, err := s.works(ctx, key)
	if err != nil {
		return err
	}
	for i := range works {
		w := &works[i]
		if !w.DeletionTimestamp.IsZero() || (keep != nil && keep(w)) {
			continue
		}
		if err := s.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !shared.IsNotFound(err) {
			return fmt.Errorf("delete work %s/%s of federatedresourcequota %s: %w", w.Namespace, w.Name, key, err)
		}
	}
	return nil
}

// writeStatus sets overall, overallUsed (from the namespace's bindings)
// and aggregatedStatus (from the Works' reflected ResourceQuota statuses),
// writing only when something changed.
func (s *quotaSync) writeStatus(ctx context.Context, q *policyv1.FederatedResourceQuota, works []workv1.Work) error {
	used, err := shared.NamespaceUsage(ctx, s.client, q.Namespace, nil)
	if err != nil {
		return err
	}
	want := api.FederatedResourceQuotaStatus{
		Overall:          q.Spec.Overall,
		OverallUsed:      api.ChargedUsage(q.Spec.Overall, used),
		AggregatedStatus: aggregated(q, works),
	}
	if apiequality.Semantic.DeepEqual(q.Status, want) {
		return nil
	}
	orig := q.DeepCopy()
	q.Status = want
	if err := s.client.Status().Patch(ctx, q, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write status of federatedresourcequota %s/%s: %w", q.Namespace, q.Name, err)
	}
	return nil
}

// aggregated is each assigned cluster's ResourceQuota status from the
// quota's applied Works, sorted by cluster; a Work not applied, or whose
// member has not reported yet, gives nothing.
func aggregated(q *policyv1.FederatedResourceQuota, works []workv1.Work) []api.ClusterQuotaStatus {
	var out []api.ClusterQuotaStatus
	for i := range works {
		w := &works[i]
		cluster, ok := shared.ClusterOfNamespace(w.Namespace)
		if !ok || w.Labels[shared.LabelQuotaID] != string(q.UID) || !w.DeletionTimestamp.IsZero() {
			continue
		}
		if c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied); c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		ms := shared.ManifestStatusOf(w.Status.ManifestStatuses, api.TemplateRef{Version: "v1", Kind: "ResourceQuota", Namespace: q.Namespace, Name: q.Name})
		if ms == nil {
			continue
		}
		status, _, _ := shared.SplitStatus(ms.Status)
		if status == nil {
			continue
		}
		raw, err := json.Marshal(status)
		if err != nil {
			continue
		}
		var rqs corev1.ResourceQuotaStatus
		if err := json.Unmarshal(raw, &rqs); err != nil {
			continue
		}
		out = append(out, api.ClusterQuotaStatus{ClusterName: cluster, ResourceQuotaStatus: rqs})
	}
	slices.SortFunc(out, func(a, b api.ClusterQuotaStatus) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return out
}
