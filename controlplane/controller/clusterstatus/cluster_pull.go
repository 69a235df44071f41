package clusterstatus

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// ReasonClusterStatusUnknown is the Ready reason of a Pull cluster whose
// agent stopped renewing its Lease (or never did): Ready is Unknown, as
// Karmada's cluster controller reports it, so the cluster is tainted
// unreachable.
const ReasonClusterStatusUnknown = "ClusterStatusUnknown"

// agentLease is what the control plane knows of a Pull cluster's Lease:
// the renewal the agent last wrote, its duration, and when the control
// plane first saw that renewal, by its own clock. Expiry is counted from
// seen, as Kubernetes' node lifecycle controller counts from its own probe
// timestamp: a control plane that restarts (or was cut off from its host)
// gives every agent a full lease duration, and the agent's clock may be
// off without turning its cluster Unknown.
type agentLease struct {
	renewTime *metav1.MicroTime
	duration  time.Duration
	seen      time.Time
}

// observeLease records a Pull cluster's Lease (nil when there is none) and
// returns what is known of it at now.
func (r *clusterReconciler) observeLease(name string, l *coordinationv1.Lease, now time.Time) agentLease {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l == nil || l.Spec.RenewTime == nil {
		delete(r.renewals, name)
		return agentLease{}
	}
	last, ok := r.renewals[name]
	if !ok || !last.renewTime.Equal(l.Spec.RenewTime) {
		last = agentLease{renewTime: l.Spec.RenewTime.DeepCopy(), seen: now}
	}
	last.duration = time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second
	r.renewals[name] = last
	return last
}

// reconcilePull keeps a Pull cluster's status and taints: the agent writes
// the facts and its own Ready condition while it renews its Lease; once the
// Lease has expired Ready turns Unknown here, and the taints follow Ready as
// they do for a probed cluster, so failover and graceful eviction work
// unchanged.
func (r *clusterReconciler) reconcilePull(ctx context.Context, cl *clusterv1.Cluster) (ctrl.Result, error) {
	// A cluster switched from Push keeps no member client.
	r.members.Cache.Invalidate(cl.Name)
	now := r.now()
	var l coordinationv1.Lease
	found := &l
	err := r.leases.Get(ctx, client.ObjectKey{Namespace: shared.ClusterLeaseNamespace(), Name: cl.Name}, &l)
	switch {
	case shared.IsNotFound(err):
		found = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read lease %s/%s of cluster %s: %w", shared.ClusterLeaseNamespace(), cl.Name, cl.Name, err)
	}
	before := cl.DeepCopy()
	status, expiresIn := pullStatus(cl.Name, cl.Status, r.observeLease(cl.Name, found, now), now)
	taints, wait := nextTaints(cl.Spec.Taints, apimeta.FindStatusCondition(status.Conditions, api.ClusterConditionReady), now, r.opts.NoExecuteAfter)
	if !equality.Semantic.DeepEqual(status, cl.Status) {
		orig := cl.DeepCopy()
		cl.Status = status
		// The agent writes the same status: a lost update would drop its
		// report, or this Unknown.
		if err := r.client.Status().Patch(ctx, cl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("write status of cluster %s: %w", cl.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(taints, cl.Spec.Taints) {
		orig := cl.DeepCopy()
		cl.Spec.Taints = taints
		if err := r.client.Patch(ctx, cl, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("write taints of cluster %s: %w", cl.Name, err)
		}
	}
	r.observeProbe(cl, before)
	after := r.opts.ProbeInterval
	for _, d := range []time.Duration{wait, expiresIn} {
		if d > 0 && d < after {
			after = d
		}
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// pullStatus is a Pull cluster's status at now given its agent's Lease:
// the status the agent wrote while the Lease holds, and the time until it
// expires; once it has expired (or when no agent ever renewed it), the same
// status with Ready Unknown (the facts are kept, as for a member that
// failed its probe).
func pullStatus(cluster string, current api.ClusterStatus, lease agentLease, now time.Time) (api.ClusterStatus, time.Duration) {
	msg := fmt.Sprintf("no agent has renewed lease %s/%s of cluster %s", shared.ClusterLeaseNamespace(), cluster, cluster)
	if lease.renewTime != nil {
		if left := lease.seen.Add(lease.duration).Sub(now); left > 0 {
			return current, left
		}
		msg = fmt.Sprintf("the agent of cluster %s has not renewed lease %s/%s for %s (last renewal %s, duration %s)",
			cluster, shared.ClusterLeaseNamespace(), cluster, now.Sub(lease.seen).Round(time.Second), lease.renewTime.UTC().Format(time.RFC3339), lease.duration)
	}
	next := *current.DeepCopy()
	prev := apimeta.FindStatusCondition(next.Conditions, api.ClusterConditionReady)
	if prev != nil && prev.Status == metav1.ConditionUnknown && prev.Reason == ReasonClusterStatusUnknown {
		return current, 0
	}
	apimeta.SetStatusCondition(&next.Conditions, metav1.Condition{
		Type: api.ClusterConditionReady, Status: metav1.ConditionUnknown,
		Reason: ReasonClusterStatusUnknown, Message: msg, LastTransitionTime: metav1.NewTime(now),
	})
	return next, 0
}
