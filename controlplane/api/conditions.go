package api

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Taints, condition types and condition reasons, Karmada's names where
// Karmada has one. They live here, beside the types they are written on, so
// that every driver and front end reads and writes the same strings.

// Karmada's taints for clusters that are not ready or not reachable. The
// continuous driver's cluster controller sets them from the Ready condition;
// the synchronous driver sets the unreachable one with effect NoExecute on a
// member that does not answer, so the scheduler moves replicas away from it
// exactly as Karmada's taint manager would.
const (
	// TaintClusterNotReady marks a cluster whose Ready condition is False.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"
	// TaintClusterUnreachable marks a cluster whose Ready condition is
	// Unknown, or that did not answer.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
	// TaintClusterUnschedulable marks a cordoned cluster (Karmada's
	// `karmadactl cordon`): NoSchedule, set and cleared by the user.
	TaintClusterUnschedulable = "cluster.karmada.io/unschedulable"
)

// IsClusterStatusTaint reports whether key is one of the taints derived from
// a cluster's status (TaintClusterNotReady, TaintClusterUnreachable), which
// the control plane owns rather than the user.
func IsClusterStatusTaint(key string) bool {
	return key == TaintClusterNotReady || key == TaintClusterUnreachable
}

// Condition types of a Cluster.
const (
	// ClusterConditionReady is the condition type that says a member
	// accepts workloads.
	ClusterConditionReady = "Ready"
	// ClusterConditionCompleteAPIEnablements says status.apiEnablements
	// lists every API the member serves (Karmada's
	// ClusterConditionCompleteAPIEnablements). Without it the list is not
	// trusted to be exhaustive.
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// Reasons of a Cluster's conditions.
const (
	// ReasonClusterReady: the member answered its health check.
	ReasonClusterReady = "ClusterReady"
	// ReasonClusterNotReady: the member answered that it is not healthy.
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonClusterNotReachable: the member did not answer, or refused
	// flotilla's credentials.
	ReasonClusterNotReachable = "ClusterNotReachable"
	// ReasonCredentialsRefused: the Cluster's credentials were refused
	// before any connection was tried.
	ReasonCredentialsRefused = "CredentialsRefused"
	// ReasonMembershipConflict: the member carries the membership marker
	// of another Cluster, another fleet, another control plane of the same
	// fleet name, or Terraform; nothing is then applied or pruned there.
	ReasonMembershipConflict = "MembershipConflict"

	// ReasonAPIEnablementsComplete: discovery of every API group succeeded.
	ReasonAPIEnablementsComplete = "Complete"
	// ReasonAPIEnablementsPartial: some API groups failed discovery (an
	// aggregated API whose backend is down, typically).
	ReasonAPIEnablementsPartial = "Partial"
	// ReasonAPIEnablementsEmpty: discovery returned nothing.
	ReasonAPIEnablementsEmpty = "Empty"
)

// NotReadyStatus is the status of a member that could not be observed, or
// must not be used: only a Ready=False condition with reason (such as
// ReasonClusterNotReachable) and the error as its message, changed at at.
// Every other fact is unknown, so none is given.
func NotReadyStatus(reason string, err error, at metav1.Time) ClusterStatus {
	return ClusterStatus{Conditions: []metav1.Condition{{
		Type: ClusterConditionReady, Status: metav1.ConditionFalse,
		Reason: reason, Message: err.Error(), LastTransitionTime: at,
	}}}
}

// ErrNotConnected means a member could not be reached: no answer came back
// (the connection was refused or timed out, the name did not resolve, the
// TLS handshake failed, the credential plugin did not run), or there is no
// client for it at all. Errors about an unreachable member wrap it, so
// callers tell it apart with errors.Is; where the member is not named by
// the context (an Observation, say), the error names it.
var ErrNotConnected = errors.New("not connected")

// Condition types of a ResourceBinding.
const (
	// ConditionScheduled is the binding condition the scheduler sets.
	ConditionScheduled = "Scheduled"
	// ConditionFullyApplied is the binding condition the binding
	// controller sets from its Works: True when every scheduled cluster's
	// Work is applied.
	ConditionFullyApplied = "FullyApplied"
)

// Condition types of a Work, Karmada's names.
const (
	// ConditionWorkApplied is set by the execution controller: the
	// manifests were applied to the member (True) or not, and why.
	ConditionWorkApplied = "Applied"
	// ConditionWorkAvailable is set by the work status controller: every
	// manifest exists in the member (True) or not, and why.
	ConditionWorkAvailable = "Available"
	// ConditionDispatching is the Work and binding condition that says
	// whether the claiming policy's suspension holds dispatch back,
	// Karmada's WorkDispatching. On a binding it is present only while some
	// scheduled cluster is held back.
	ConditionDispatching = "Dispatching"
)

// Reasons of binding and Work conditions, and of template events.
const (
	// ReasonRefused: flotilla refuses the binding (FullyApplied) or the
	// Work (Applied), as it is not one the control plane would have written.
	ReasonRefused = "Refused"
	// ReasonSignatureMissing: a pull agent does not apply a Work that
	// claims the control plane's verification of its generation but
	// carries no signature (Applied).
	ReasonSignatureMissing = "SignatureMissing"
	// ReasonSignatureInvalid: a pull agent does not apply a Work whose
	// signature does not verify against the key the control plane
	// published on the agent's Cluster, or when no usable key is
	// published (Applied).
	ReasonSignatureInvalid = "SignatureInvalid"
	// ReasonDispatching is the Dispatching reason of a Work being dispatched.
	ReasonDispatching = "Dispatching"
	// ReasonWorkApplied: the Work's manifests were applied (Applied).
	ReasonWorkApplied = "AppliedSuccessful"
	// ReasonWorkApplyFailed: a manifest could not be applied (Applied).
	ReasonWorkApplyFailed = "AppliedFailed"
	// ReasonWorkRemovalFailed: a manifest could not be removed from the
	// member (Applied).
	ReasonWorkRemovalFailed = "RemovalFailed"
	// ReasonWorkAvailable: every manifest exists in the member (Available).
	ReasonWorkAvailable = "ManifestsAvailable"
	// ReasonWorkNotFound: a manifest is missing from the member (Available).
	ReasonWorkNotFound = "NotFound"
	// ReasonWorkObserveFailed: the member could not be read (Available).
	ReasonWorkObserveFailed = "ObserveFailed"
	// ReasonSuspendDispatching is Karmada's reason for a held-back Work.
	ReasonSuspendDispatching = "SuspendDispatching"
	// ReasonOtherScheduler is the Scheduled reason of a binding whose
	// policy names another scheduler.
	ReasonOtherScheduler = "OtherScheduler"
	// ReasonDependentOverridesMissing is the template event of a template
	// whose claiming policy waits for override policies.
	ReasonDependentOverridesMissing = "DependentOverridesMissing"
	// ReasonPriorityClassNotFound is the template event of a template whose
	// claiming policy's schedulePriority names no PriorityClass.
	ReasonPriorityClassNotFound = "PriorityClassNotFound"
	// ReasonPolicyInvalid is the event of a policy that fails validation
	// (written while no admission webhook ran), and of a template that
	// policy holds at its last valid placement or rendering.
	ReasonPolicyInvalid = "PolicyInvalid"
)
