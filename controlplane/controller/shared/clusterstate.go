package shared

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

// ProbeStreak is the run of equal probe results a cluster has had.
type ProbeStreak struct {
	Ready bool
	Since time.Time
}

// NextStatus is the status to write after a probe. The Ready condition only
// follows the probe once the probe has said the same for the success or
// failure threshold, so one lost probe does not move replicas; until then the
// previous status is kept whole. A failed probe keeps the last known facts
// (version, API enablements, summaries), as Karmada does.
func NextStatus(current, probed api.ClusterStatus, ready bool, since, now time.Time, opts Options) api.ClusterStatus {
	prev := apimeta.FindStatusCondition(current.Conditions, api.ClusterConditionReady)
	if prev != nil && (prev.Status == metav1.ConditionTrue) != ready {
		threshold := opts.FailureThreshold
		if ready {
			threshold = opts.SuccessThreshold
		}
		if now.Sub(since) < threshold {
			return current
		}
	}
	next := *current.DeepCopy()
	if ready {
		next = *probed.DeepCopy()
		next.Conditions = current.DeepCopy().Conditions
	}
	for _, c := range probed.Conditions {
		c.LastTransitionTime = metav1.NewTime(now)
		apimeta.SetStatusCondition(&next.Conditions, c)
	}
	if !ready {
		// Only Ready is meaningful for a member that did not answer.
		for _, c := range probed.Conditions {
			if c.Type != api.ClusterConditionReady {
				apimeta.RemoveStatusCondition(&next.Conditions, c.Type)
			}
		}
	}
	return next
}

// IsNotFound is apierrors.IsNotFound, named for readability at call sites.
func IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

// ClusterLeaseNamespace is the host namespace holding one Lease per
// pull-mode Cluster, named after it, which the cluster's agent renews:
// flotilla-cluster, or karmada-cluster in Karmada's groups, as Karmada
// keeps them (apis.Groups.ClusterLeaseNamespace, chosen once by apis.Use).
// The control plane reads a Pull cluster's liveness from it instead of
// probing the member. It is reserved: its objects are never templates.
func ClusterLeaseNamespace() string { return apis.Current().ClusterLeaseNamespace() }

// IsPull reports whether a Cluster is served by an agent in the member
// (spec.syncMode Pull): the control plane has no route or credentials to
// it, and the push reconcilers leave it to the agent.
func IsPull(cl *clusterv1.Cluster) bool { return cl.Spec.SyncMode == api.Pull }
