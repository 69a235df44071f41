package mcs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// EventReasonCrossClusterServed (Normal, or Warning when no consumer is
// served) is recorded on a MultiClusterService when its providers,
// consumers or the reasons clusters are left out change.
const EventReasonCrossClusterServed = "CrossClusterServed"

// crossClusterKey is the reconcile key of the MultiClusterService
// namespace/name (not an object's name: the kind's suffix tells it apart
// from the MCS API's bindings).
func crossClusterKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name + bindingSuffix()[api.KindMultiClusterService]}
}

// getCrossCluster reads the MultiClusterService namespace/name; nil when
// it is gone or being deleted.
func (r *reconciler) getCrossCluster(ctx context.Context, namespace, name string) (*networkingv1.MultiClusterService, error) {
	var m networkingv1.MultiClusterService
	err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &m)
	switch {
	case shared.IsNotFound(err) || apimeta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read MultiClusterService %s/%s: %w", namespace, name, err)
	case !m.DeletionTimestamp.IsZero():
		return nil, nil
	}
	return &m, nil
}

// crossClusterProviders are the providers of the MultiClusterService of
// the Service namespace/name, whose endpoints the collection reads; nil
// when there is no such MultiClusterService or it is invalid (it provides
// nothing), never nil otherwise.
func (r *reconciler) crossClusterProviders(ctx context.Context, namespace, name string) ([]string, error) {
	m, err := r.getCrossCluster(ctx, namespace, name)
	if m == nil || err != nil || len(m.Validate()) > 0 {
		return nil, err
	}
	_, providers, _, _, err := shared.CrossClusterSets(ctx, r.client, m, r.opts)
	if err != nil {
		return nil, err
	}
	return append([]string{}, providers...), nil
}

// crossCluster gives each consumer of the MultiClusterService
// namespace/name, through Works, the EndpointSlices
// shared.RenderCrossCluster renders for it, deletes the Works nothing
// wants any more, and writes its ServiceApplied condition. A
// MultiClusterService that is gone leaves no Work (active is false); an
// invalid one leaves none either and says why.
func (r *reconciler) crossCluster(ctx context.Context, namespace, name string) (active bool, err error) {
	m, err := r.getCrossCluster(ctx, namespace, name)
	if err != nil {
		return true, err
	}
	if m == nil {
		r.notes.forget(crossClusterKey(namespace, name))
		return false, r.deleteCrossClusterWorks(ctx, namespace, name)
	}
	plan, err := shared.RenderCrossCluster(ctx, r.client, m, r.opts)
	if shared.IsRefused(err) {
		if err := r.deleteCrossClusterWorks(ctx, namespace, name); err != nil {
			return true, err
		}
		cond := metav1.Condition{Type: multicluster.ConditionServiceApplied, Status: metav1.ConditionFalse, Reason: multicluster.ReasonInvalid, Message: err.Error()}
		return true, r.writeCrossClusterStatus(ctx, m, cond)
	}
	if err != nil {
		return true, err
	}
	desired := map[client.ObjectKey]*workv1.Work{}
	var clusters []api.TargetCluster
	for _, cluster := range slices.Sorted(maps.Keys(plan.Objects)) {
		clusters = append(clusters, api.TargetCluster{Name: cluster})
		for _, obj := range plan.Objects[cluster] {
			w, err := shared.NewCrossClusterWork(m, cluster, obj)
			if err != nil {
				return true, err
			}
			desired[client.ObjectKeyFromObject(w)] = w
		}
	}
	if err := shared.EnsureExecutionSpaces(ctx, r.client, clusters); err != nil {
		return true, err
	}
	existing, err := r.crossClusterWorks(ctx, namespace, name)
	if err != nil {
		return true, err
	}
	have := map[client.ObjectKey]*workv1.Work{}
	for i := range existing {
		w := &existing[i]
		key := client.ObjectKeyFromObject(w)
		if _, ok := desired[key]; !ok || w.Labels[shared.LabelCrossClusterUID] != string(m.UID) {
			// A Work of an earlier MultiClusterService of the same name goes too.
			if err := r.deleteWork(ctx, w); err != nil {
				return true, err
			}
			continue
		}
		have[key] = w
	}
	for _, key := range slices.SortedFunc(maps.Keys(desired), func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) }) {
		want := desired[key]
		if cur, ok := have[key]; ok {
			if !cur.DeletionTimestamp.IsZero() || r.written.stale(cur) {
				continue // created again once gone; patched once the cache shows the last patch
			}
			if merged, changed := shared.MergeWork(cur, want); changed {
				if err := r.patchWork(ctx, cur, merged); err != nil {
					return true, err
				}
			}
			continue
		}
		if err := r.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			// AlreadyExists: the cache lagged, or the name is another
			// Work's, which is never taken over.
			return true, fmt.Errorf("create work %s: %w", key, err)
		}
	}
	cond := multicluster.CrossClusterCondition(plan.Providers, plan.Consumers, plan.WhyNot)
	r.servedNote(m, cond)
	return true, r.writeCrossClusterStatus(ctx, m, cond)
}

// crossClusterWorks lists the Works of the MultiClusterService
// namespace/name.
func (r *reconciler) crossClusterWorks(ctx context.Context, namespace, name string) ([]workv1.Work, error) {
	var list workv1.WorkList
	if err := r.client.List(ctx, &list, client.MatchingLabels{shared.LabelCrossClusterNamespace: namespace, shared.LabelCrossClusterName: name}); err != nil {
		return nil, fmt.Errorf("list works of MultiClusterService %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}

// deleteCrossClusterWorks deletes every Work of the MultiClusterService
// namespace/name; their removal takes its slices out of the consumers.
func (r *reconciler) deleteCrossClusterWorks(ctx context.Context, namespace, name string) error {
	works, err := r.crossClusterWorks(ctx, namespace, name)
	if err != nil {
		return err
	}
	for i := range works {
		if err := r.deleteWork(ctx, &works[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeCrossClusterStatus sets cond on m's status, keeping its
// lastTransitionTime while its status holds; an unchanged status writes
// nothing. Only the conditions are patched.
func (r *reconciler) writeCrossClusterStatus(ctx context.Context, m *networkingv1.MultiClusterService, cond metav1.Condition) error {
	next := m.DeepCopy()
	apimeta.SetStatusCondition(&next.Status.Conditions, cond)
	if equality.Semantic.DeepEqual(m.Status.Conditions, next.Status.Conditions) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, next, client.MergeFrom(m)); err != nil {
		return fmt.Errorf("write status of MultiClusterService %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

// servedNote records cond's message on m when it changed.
func (r *reconciler) servedNote(m *networkingv1.MultiClusterService, cond metav1.Condition) {
	if !r.notes.changed(crossClusterKey(m.Namespace, m.Name), cond.Message) {
		return
	}
	kind := corev1.EventTypeNormal
	if cond.Status != metav1.ConditionTrue {
		kind = corev1.EventTypeWarning
	}
	r.events.Object(m, kind, EventReasonCrossClusterServed, actionSync, cond.Message)
}
