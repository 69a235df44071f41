package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label values of flotilla_federatedhpa_decisions_total's result label.
const (
	DecisionScaleUp   = "scale_up"
	DecisionScaleDown = "scale_down"
	DecisionUnchanged = "unchanged"
	DecisionFailed    = "failed"
)

// The FederatedHPA's series are labelled by its namespace and name and,
// for member reads, the member: never by pod, metric series or error
// text, so their number is bounded by the autoscalers and the fleet.
var (
	// FederatedHPADecisions counts the FederatedHPA's passes by result:
	// scale_up or scale_down (the template's replicas were written),
	// unchanged, or failed (no scale read, no binding, or the write
	// failed).
	FederatedHPADecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_federatedhpa_decisions_total",
		Help: "Number of decisions of a FederatedHPA, by namespace, name and result: scale_up or scale_down (the template's replicas were written), unchanged, or failed (its target's scale or binding could not be read, or the write failed).",
	}, []string{"namespace", "name", "result"})

	// FederatedHPACurrentReplicas is the target's replicas at the last
	// decision.
	FederatedHPACurrentReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_federatedhpa_current_replicas",
		Help: "Replicas of a FederatedHPA's target at its last decision, by namespace and name.",
	}, []string{"namespace", "name"})

	// FederatedHPADesiredReplicas is the replicas the last decision asked
	// for (after the behavior and the bounds).
	FederatedHPADesiredReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_federatedhpa_desired_replicas",
		Help: "Replicas a FederatedHPA's last decision asked for, after its behavior and bounds, by namespace and name.",
	}, []string{"namespace", "name"})

	// FederatedHPAMemberReadErrors counts the member reads of a decision
	// that left the member's pods or a metric missing.
	FederatedHPAMemberReadErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_federatedhpa_member_read_errors_total",
		Help: "Number of reads of a member cluster by a FederatedHPA decision that left its pods or one of its metrics missing (unreachable, no object, metrics API not served or failed), by namespace, name and member_cluster.",
	}, []string{"namespace", "name", memberCluster})

	// FederatedHPAMemberReadDuration is the time to read one member's
	// pods and metrics for a decision.
	FederatedHPAMemberReadDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_federatedhpa_member_read_duration_seconds",
		Help:    "Time in seconds to read one member cluster's pods and metrics for a FederatedHPA decision, by member_cluster and result (success or error).",
		Buckets: buckets,
	}, []string{memberCluster, "result"})
)

// ForgetFederatedHPA drops the series of a FederatedHPA that is gone.
func ForgetFederatedHPA(namespace, name string) {
	l := prometheus.Labels{"namespace": namespace, "name": name}
	FederatedHPADecisions.DeletePartialMatch(l)
	FederatedHPACurrentReplicas.DeletePartialMatch(l)
	FederatedHPADesiredReplicas.DeletePartialMatch(l)
	FederatedHPAMemberReadErrors.DeletePartialMatch(l)
}

func init() {
	ctrlmetrics.Registry.MustRegister(FederatedHPADecisions, FederatedHPACurrentReplicas, FederatedHPADesiredReplicas,
		FederatedHPAMemberReadErrors, FederatedHPAMemberReadDuration)
}
