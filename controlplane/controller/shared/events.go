package shared

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// Reasons of the Kubernetes Events the reconcilers record (events.k8s.io/v1,
// shown by `kubectl describe` and `kubectl events`). Where Karmada records
// the same event, the reason is Karmada's.
const (
	// EventReasonScheduleBindingSucceed (Normal, on the binding and its
	// template): the binding was placed, or placed anew.
	EventReasonScheduleBindingSucceed = "ScheduleBindingSucceed"
	// EventReasonScheduleBindingFailed (Warning, on the binding and its
	// template): no cluster fits, or the scheduler failed; recorded when the
	// reason changes, not on every retry.
	EventReasonScheduleBindingFailed = "ScheduleBindingFailed"
	// EventReasonClusterFailover (Warning, on the binding and its template):
	// the binding left a cluster with an untolerated NoExecute taint.
	EventReasonClusterFailover = "ClusterFailover"
	// EventReasonApplicationFailover (Warning, on the binding and its
	// template): the binding left a cluster where the template stayed
	// unhealthy past the toleration.
	EventReasonApplicationFailover = "ApplicationFailover"
	// EventReasonEvictWorkloadFromClusterSucceed (Normal, on the binding and
	// its template): a graceful eviction task ended, so the evicted copy is
	// removed from its cluster.
	EventReasonEvictWorkloadFromClusterSucceed = "EvictWorkloadFromClusterSucceed"
	// EventReasonDescheduleBindingSucceed (Normal, on the binding and its
	// template): the descheduler took replicas that cannot start off a
	// cluster; the note names how many from which cluster.
	EventReasonDescheduleBindingSucceed = "DescheduleBindingSucceed"
	// EventReasonDescheduleBindingFailed (Warning, on the binding and its
	// template): the descheduler could not write the lowered clusters.
	EventReasonDescheduleBindingFailed = "DescheduleBindingFailed"
	// EventReasonSyncSucceed (Normal, on the Work): its manifests are
	// applied to the member, recorded when that becomes true.
	EventReasonSyncSucceed = "SyncSucceed"
	// EventReasonSyncFailed (Warning, on the Work): applying to the member
	// failed or was refused; recorded when the failure changes.
	EventReasonSyncFailed = "SyncFailed"
	// EventReasonClusterReady (Normal, on the Cluster): Ready became True.
	EventReasonClusterReady = "ClusterReady"
	// EventReasonClusterNotReady (Warning, on the Cluster): Ready became
	// False or Unknown.
	EventReasonClusterNotReady = "ClusterNotReady"
	// EventReasonTaintClusterSucceed (Normal, on the Cluster): the
	// not-ready/unreachable taints changed.
	EventReasonTaintClusterSucceed = "TaintClusterSucceed"
	// EventReasonRolloutStageStarted (Normal, on the binding and its
	// template): a stage of a staged rollout starts, or a halted rollout
	// resumes (a new revision, or the resume annotation).
	EventReasonRolloutStageStarted = "RolloutStageStarted"
	// EventReasonRolloutGatePassed (Normal, on the binding and its
	// template): a stage's gate passed.
	EventReasonRolloutGatePassed = "RolloutGatePassed"
	// EventReasonRolloutHalted (Warning, on the binding and its template):
	// a gate failed; the message names the stage, the clusters and why.
	EventReasonRolloutHalted = "RolloutHalted"
	// EventReasonRolloutComplete (Normal, on the binding and its
	// template): every stage passed.
	EventReasonRolloutComplete = "RolloutComplete"
)

// The events' actions (events.k8s.io/v1 requires one).
const (
	ActionSchedule   = "Schedule"
	ActionDeschedule = "Deschedule"
	ActionFailover   = "Failover"
	ActionEvict      = "Evict"
	ActionApply      = "Apply"
	ActionProbe      = "Probe"
	ActionTaint      = "Taint"
)

// Recorder records the reconcilers' events. A nil recorder records none.
type Recorder struct {
	events events.EventRecorder
	// backlog, when set, holds the events back while the schedule's
	// queues are long (HeldBy).
	backlog *Backlog
}

// HeldBy returns a recorder whose events wait while b's queues are long
// and are recorded, unchanged (reason, type, objects, note), once they are
// short: on a cold start the scheduler's two Events per binding were as
// many host writes as its own (issue 40).
func (r Recorder) HeldBy(b *Backlog) Recorder {
	r.backlog = b
	return r
}

// Binding records an event on the binding (of either kind) and on its
// template, each naming the other as related.
func (r Recorder) Binding(rb *workv1.ResourceBinding, eventType, reason, action, note string) {
	if r.events == nil {
		return
	}
	// Only the reference is kept while the event waits, not the binding.
	ref := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: rb.Namespace, Name: rb.Name, UID: rb.UID, ResourceVersion: rb.ResourceVersion}}
	stored, tmpl := asStored(ref), templateRef(rb)
	r.backlog.Defer(func() {
		r.events.Eventf(stored, tmpl, eventType, reason, action, "%s", note)
		r.events.Eventf(tmpl, stored, eventType, reason, action, "%s", note)
	})
}

// Object records an event on obj alone, at once: the caller may change obj
// afterwards, so it is never held.
func (r Recorder) Object(obj runtime.Object, eventType, reason, action, note string) {
	if r.events == nil {
		return
	}
	r.events.Eventf(obj, nil, eventType, reason, action, "%s", note)
}

// templateRef is the reference of a binding's template, for events.
func templateRef(rb *workv1.ResourceBinding) *corev1.ObjectReference {
	res := rb.Spec.Resource
	return &corev1.ObjectReference{APIVersion: res.APIVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name, UID: res.UID}
}

// ConditionMoved reports whether next differs from prev in what an event
// tells: status, reason or message.
func ConditionMoved(prev *metav1.Condition, next metav1.Condition) bool {
	return prev == nil || prev.Status != next.Status || prev.Reason != next.Reason || prev.Message != next.Message
}

// ClusterFailovers are the clusters a schedule takes a binding off because
// of an untolerated NoExecute taint, with the taint: the cluster failovers
// of Karmada's taint manager, whatever the purge mode.
func ClusterFailovers(prev, next []api.TargetCluster, clusters map[string]*api.Cluster, tolerations []corev1.Toleration, now time.Time) map[string]string {
	out := map[string]string{}
	for _, tc := range prev {
		if slices.ContainsFunc(next, func(n api.TargetCluster) bool { return n.Name == tc.Name }) {
			continue
		}
		c, ok := clusters[tc.Name]
		if !ok {
			continue
		}
		if taint := untoleratedNoExecute(c, tolerations, now); taint != nil {
			out[tc.Name] = taint.ToString()
		}
	}
	return out
}
