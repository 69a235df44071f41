package fleetview

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	searchv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/search/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// searchKey is the one key the search reconciler runs under: the cache's
// selection is the union of every registry over every cluster, so any
// change recomputes all of it.
var searchKey = reconcile.Request{NamespacedName: client.ObjectKey{Name: "resource-registries"}}

// searchRetry is how soon a selection that could not all be cached (a
// member down, a kind it does not serve yet) is tried again.
const searchRetry = 30 * time.Second

// searchResync is how often a selection that is all cached is computed
// again anyway: a member's rotated credentials (its Secret, which no
// watch here follows) give its client a new fingerprint, and the
// member's informers restart over it.
const searchResync = 5 * time.Minute

// setupSearch registers the reconciler that keeps the search cache to the
// ResourceRegistries' selection.
func setupSearch(mgr ctrl.Manager, ms *shared.Members, cache *fleetview.Cache) error {
	r := &searchReconciler{host: mgr.GetClient(), members: ms, cache: cache}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{searchKey}
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("search-cache").
		Watches(&searchv1.ResourceRegistry{}, one).
		// A Cluster's probes rewrite its status every few seconds; only
		// its spec and labels decide what is selected.
		Watches(&clusterv1.Cluster{}, one, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Complete(r); err != nil {
		return fmt.Errorf("set up search cache controller: %w", err)
	}
	return mgr.Add(cache)
}

type searchReconciler struct {
	host    client.Client
	members *shared.Members
	cache   *fleetview.Cache
}

// Reconcile computes, from every ResourceRegistry, which kinds of which
// members are cached, hands that to the cache, and reports per registry
// whether all of its selection is cached (Synced) or what is not, by
// cluster and kind.
func (r *searchReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var registries searchv1.ResourceRegistryList
	if err := r.host.List(ctx, &registries); err != nil {
		return reconcile.Result{}, fmt.Errorf("list resource registries: %w", err)
	}
	var clusters clusterv1.ClusterList
	if err := r.host.List(ctx, &clusters); err != nil {
		return reconcile.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	kinds := map[schema.GroupVersionResource]*fleetview.Kind{}
	// One member's mapping of one kind, shared by the registries that ask.
	type mapped struct {
		mapping *apimeta.RESTMapping
		source  fleetview.Source
		err     error
	}
	seen := map[string]mapped{}
	resolve := func(cl *clusterv1.Cluster, gvk schema.GroupVersionKind) mapped {
		key := cl.Name + "\x00" + gvk.String()
		if m, ok := seen[key]; ok {
			return m
		}
		var m mapped
		c, err := r.members.Member(ctx, cl.Name)
		if err == nil {
			m.source = fleetview.Source{Cluster: cl.Name, Client: c.Dynamic, Fingerprint: c.Fingerprint()}
			m.mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
		if err != nil {
			m.err = fmt.Errorf("cluster %s: %s: %w", cl.Name, gvk, err)
		}
		seen[key] = m
		return m
	}
	var problems []error
	for i := range registries.Items {
		reg := &registries.Items[i]
		if !reg.DeletionTimestamp.IsZero() {
			continue
		}
		var failed []string
		gvks, errs := reg.GroupVersionKinds()
		for _, e := range errs {
			failed = append(failed, e.Error())
		}
		if len(errs) == 0 {
			match := policy.NewClusterMatcher(&reg.Spec.TargetCluster)
			for j := range clusters.Items {
				cl := &clusters.Items[j]
				engine := api.Cluster{ObjectMeta: cl.ObjectMeta, Spec: cl.Spec, Status: cl.Status}
				if !cl.DeletionTimestamp.IsZero() || !match(&engine) {
					continue
				}
				if cl.Spec.SyncMode == api.Pull {
					failed = append(failed, fmt.Sprintf("cluster %s is in Pull mode: the control plane has no connection to cache it from", cl.Name))
					continue
				}
				for _, gvk := range gvks {
					m := resolve(cl, gvk)
					if m.err != nil {
						failed = append(failed, m.err.Error())
						continue
					}
					k := kinds[m.mapping.Resource]
					if k == nil {
						k = &fleetview.Kind{Resource: m.mapping.Resource, GroupVersionKind: gvk,
							Namespaced: m.mapping.Scope.Name() == apimeta.RESTScopeNameNamespace}
						kinds[m.mapping.Resource] = k
					}
					if !slices.ContainsFunc(k.Sources, func(s fleetview.Source) bool { return s.Cluster == cl.Name }) {
						k.Sources = append(k.Sources, m.source)
					}
				}
			}
		}
		if err := r.report(ctx, reg, failed); err != nil {
			problems = append(problems, err)
		}
	}
	out := make([]fleetview.Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.String() < out[j].Resource.String() })
	r.cache.Set(out)
	if len(problems) > 0 {
		return reconcile.Result{}, problems[0]
	}
	// A member that was down or lacked the kind is tried again; what went
	// wrong is on the registries' Synced condition.
	retry := false
	for _, m := range seen {
		retry = retry || m.err != nil
	}
	if retry {
		return reconcile.Result{RequeueAfter: searchRetry}, nil
	}
	return reconcile.Result{RequeueAfter: searchResync}, nil
}

// report sets the registry's Synced condition: True when everything it
// selects is cached, False naming each cluster and kind that is not.
func (r *searchReconciler) report(ctx context.Context, reg *searchv1.ResourceRegistry, failed []string) error {
	cond := metav1.Condition{Type: searchv1.ConditionSynced, Status: metav1.ConditionTrue, Reason: "Cached",
		Message: "every selected kind of every selected cluster is cached", ObservedGeneration: reg.Generation}
	if len(failed) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, "NotCached"
		cond.Message = strings.Join(failed, "; ")
	}
	patched := reg.DeepCopy()
	if !apimeta.SetStatusCondition(&patched.Status.Conditions, cond) {
		return nil
	}
	if err := r.host.Status().Patch(ctx, patched, client.MergeFrom(reg)); err != nil {
		return fmt.Errorf("resource registry %s: write status: %w", reg.Name, err)
	}
	return nil
}
