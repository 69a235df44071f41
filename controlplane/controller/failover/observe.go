package failover

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// applicationFailedOver records the application failovers just written.
func (r *applicationFailoverReconciler) applicationFailedOver(rb *workv1.ResourceBinding, evicted []string, toleration time.Duration) {
	for _, name := range evicted {
		metrics.Failovers.WithLabelValues(metrics.FailoverApplication, name).Inc()
		r.events.Binding(rb, corev1.EventTypeWarning, shared.EventReasonApplicationFailover, shared.ActionFailover,
			fmt.Sprintf("left cluster %s, where the template stayed unhealthy for longer than %v", name, toleration))
	}
}
