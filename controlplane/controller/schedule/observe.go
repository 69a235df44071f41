package schedule

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// failedOver records the cluster failovers of a schedule just written:
// the clusters of prev the binding left for an untolerated NoExecute taint.
func (s *schedulerReconciler) failedOver(rb *workv1.ResourceBinding, prev []api.TargetCluster, clusters map[string]*api.Cluster, now time.Time) {
	var tolerations []corev1.Toleration
	if rb.Spec.Placement != nil {
		tolerations = rb.Spec.Placement.ClusterTolerations
	}
	left := shared.ClusterFailovers(prev, rb.Spec.Clusters, clusters, tolerations, now)
	names := make([]string, 0, len(left))
	for name := range left {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		metrics.Failovers.WithLabelValues(metrics.FailoverCluster, name).Inc()
		s.events.Binding(rb, corev1.EventTypeWarning, shared.EventReasonClusterFailover, shared.ActionFailover,
			fmt.Sprintf("left cluster %s, which has the untolerated taint %s; %s", name, left[name], shared.PlacementNote(rb.Spec.Clusters)))
	}
}
