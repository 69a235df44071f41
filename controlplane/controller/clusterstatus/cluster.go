package clusterstatus

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

// clusterReconciler probes each Cluster and writes its status and taints.
type clusterReconciler struct {
	client  client.Client
	members *shared.Members
	// leases reads the Leases of Pull clusters' agents, directly: a cached
	// read would watch every Lease of the host.
	leases client.Reader
	opts   shared.Options
	now    func() time.Time
	events shared.Recorder

	mu      sync.Mutex
	streaks map[string]shared.ProbeStreak
	// renewals are the Lease renewals of Pull clusters' agents as this
	// process saw them (observeLease).
	renewals map[string]agentLease
}

func (r *clusterReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("cluster-status").For(&clusterv1.Cluster{}).
		WithOptions(controller.Options{
			// Probes of different members run side by side, so a member
			// slow to answer delays no other member's status (and failover).
			MaxConcurrentReconciles: r.opts.ClusterStatusWorkers,
			ReconciliationTimeout:   r.opts.ProbeTimeout + shared.HostWriteMargin,
		}).
		Complete(r)
}

// Reconcile probes one Cluster.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cl clusterv1.Cluster
	if err := r.client.Get(ctx, req.NamespacedName, &cl); err != nil {
		if shared.IsNotFound(err) {
			r.forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cl.DeletionTimestamp.IsZero() {
		r.forget(cl.Name)
		return ctrl.Result{}, nil
	}
	if shared.IsPull(&cl) {
		return r.reconcilePull(ctx, &cl)
	}
	now := r.now()
	before, start := cl.DeepCopy(), time.Now()
	probed, probeErr := r.collect(ctx, &cl)
	observeProbeLatency(cl.Name, probeErr, time.Since(start))
	r.model(&cl, &probed)
	ready := apimeta.IsStatusConditionTrue(probed.Conditions, api.ClusterConditionReady)
	streak := r.streak(cl.Name, ready, now)
	if ready {
		// In memory only: a host write per probe would load the host for
		// a time nothing but the dashboard reads.
		r.opts.Probes.Record(cl.Name, now)
	}

	status := shared.NextStatus(cl.Status, probed, ready, streak.Since, now, r.opts)
	taints, wait := nextTaints(cl.Spec.Taints, apimeta.FindStatusCondition(status.Conditions, api.ClusterConditionReady), now, r.opts.NoExecuteAfter)

	if !equality.Semantic.DeepEqual(status, cl.Status) {
		orig := cl.DeepCopy()
		cl.Status = status
		if err := r.client.Status().Patch(ctx, &cl, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("write status of cluster %s: %w", cl.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(taints, cl.Spec.Taints) {
		orig := cl.DeepCopy()
		cl.Spec.Taints = taints
		if err := r.client.Patch(ctx, &cl, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("write taints of cluster %s: %w", cl.Name, err)
		}
	}
	r.observeProbe(&cl, before)
	if probeErr != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("cluster probe failed", "cluster", cl.Name, "reason", probeErr.Error())
	}
	after := r.opts.ProbeInterval
	if wait > 0 && wait < after {
		after = wait
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// model fills the probed resource summary's allocatable modelings: the
// member's Ready, schedulable nodes graded by the Cluster's resource models
// (Karmada's default ones when it declares none), from the same informers
// the summary was just read from. Without them (the member lists instead of
// watching, or its informers are syncing or failing) there are no
// modelings, and the scheduler divides the summary, as Karmada's general
// estimator does when modelings are missing.
func (r *clusterReconciler) model(cl *clusterv1.Cluster, probed *api.ClusterStatus) {
	if probed.ResourceSummary == nil {
		return
	}
	if nodes := r.members.Nodes(cl.Name); nodes != nil {
		probed.ResourceSummary.AllocatableModelings = estimator.AllocatableModelings(api.ResourceModelsOf(&cl.Spec), nodes.Free())
	}
}

// collect probes the member (members.probe): a Cluster whose credentials
// are refused or cannot be read, or whose member is registered elsewhere,
// is reported not Ready.
func (r *clusterReconciler) collect(ctx context.Context, cl *clusterv1.Cluster) (api.ClusterStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.ProbeTimeout)
	defer cancel()
	return r.members.Probe(ctx, cl)
}

// streak records a probe result and returns the run it belongs to.
func (r *clusterReconciler) streak(name string, ready bool, now time.Time) shared.ProbeStreak {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.streaks[name]
	if !ok || s.Ready != ready {
		s = shared.ProbeStreak{Ready: ready, Since: now}
		r.streaks[name] = s
	}
	return s
}

// forget drops what is kept about a Cluster that is going: its probe
// streak and its member clients, so its credentials leave memory with it.
func (r *clusterReconciler) forget(name string) {
	r.mu.Lock()
	delete(r.streaks, name)
	delete(r.renewals, name)
	r.mu.Unlock()
	r.opts.Probes.Forget(name)
	forgetClusterMetrics(name)
	r.members.Cache.Invalidate(name)
}

// nextTaints derives the not-ready/unreachable taints from the Ready
// condition, as Karmada's cluster controller does: NoSchedule as soon as the
// cluster is not Ready (not-ready for False, unreachable for Unknown), and
// NoExecute once it has been so for noExecuteAfter. Other taints are kept in
// place. The duration returned is how long until the NoExecute taint is due,
// or zero.
func nextTaints(current []corev1.Taint, ready *metav1.Condition, now time.Time, noExecuteAfter time.Duration) ([]corev1.Taint, time.Duration) {
	var key string
	switch {
	case ready == nil || ready.Status == metav1.ConditionTrue:
	case ready.Status == metav1.ConditionFalse:
		key = api.TaintClusterNotReady
	default:
		key = api.TaintClusterUnreachable
	}
	var wait time.Duration
	want := map[corev1.TaintEffect]bool{}
	if key != "" {
		want[corev1.TaintEffectNoSchedule] = true
		if left := noExecuteAfter - now.Sub(ready.LastTransitionTime.Time); left <= 0 {
			want[corev1.TaintEffectNoExecute] = true
		} else {
			wait = left
		}
	}
	var out []corev1.Taint
	for _, t := range current {
		ours := api.IsClusterStatusTaint(t.Key)
		if !ours {
			out = append(out, t)
			continue
		}
		if t.Key == key && want[t.Effect] {
			out = append(out, t)
			delete(want, t.Effect)
		}
	}
	for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		if want[effect] {
			added := metav1.NewTime(now)
			out = append(out, corev1.Taint{Key: key, Effect: effect, TimeAdded: &added})
		}
	}
	return out, wait
}
