package binding

import (
	corev1 "k8s.io/api/core/v1"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// evicted records the graceful eviction tasks that just ended.
func (b *bindingReconciler) evicted(rb *workv1.ResourceBinding, clusters []string) {
	for _, name := range clusters {
		metrics.Evictions.WithLabelValues(name).Inc()
		b.events.Binding(rb, corev1.EventTypeNormal, shared.EventReasonEvictWorkloadFromClusterSucceed, shared.ActionEvict,
			"the evicted copy on cluster "+name+" is removed")
	}
}
