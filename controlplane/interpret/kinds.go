package interpret

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is everything flotilla knows about one built-in kind. A zero field
// means the kind has no such rule: the operation then does what Karmada's
// interpreter does for a kind without one (see each operation's file).
type Kind struct {
	// PodSpec is the path of the pod spec the kind's pods run from; nil for
	// kinds without pods. Requirements, overriders and dependency
	// discovery read it.
	PodSpec []string
	// ReplicaField is the spec field that holds the replicas flotilla
	// divides ("replicas", a Job's "parallelism"); empty for kinds whose
	// replicas are not divided.
	ReplicaField string
	// SingleReplica marks a kind that is itself one replica (a bare Pod).
	SingleReplica bool
	// Dependencies marks the kinds whose pod spec names dependencies that
	// propagateDeps follows.
	Dependencies bool

	health    healthRule
	reflect   reflector
	aggregate aggregator
	retain    []retainer
	prune     pruner
	rollout   rolloutRule
}

// HasReplicas reports whether the kind's replicas are scheduled: a workload
// with a replica field, or a Pod that is one replica.
func (k Kind) HasReplicas() bool { return k.ReplicaField != "" || k.SingleReplica }

// Group kinds the rules single out.
var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSetKind  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetKind   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobKind         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobKind     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	podKind         = schema.GroupKind{Kind: "Pod"}
	serviceKind     = schema.GroupKind{Kind: "Service"}
	ingressKind     = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	pvKind          = schema.GroupKind{Kind: "PersistentVolume"}
	pvcKind         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	pdbKind         = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
	hpaKind         = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	serviceAccount  = schema.GroupKind{Kind: "ServiceAccount"}

	// JobKind is batch/Job, whose completions render divides beside its
	// parallelism (Karmada's ensureWork).
	JobKind = jobKind
	// HorizontalPodAutoscalerKind is autoscaling/HorizontalPodAutoscaler,
	// whose scale target keeps the replicas its member gives it.
	HorizontalPodAutoscalerKind = hpaKind
)

// Pod spec paths of the workload kinds.
var (
	templatePodSpec = []string{"spec", "template", "spec"}
	cronJobPodSpec  = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	podPodSpec      = []string{"spec"}
)

// builtin is the one table of flotilla's built-in kinds, keyed by group and
// kind: every served version of a kind shares the fields the rules read.
// It covers Karmada's native interpreter kinds; to teach flotilla a new
// built-in kind, add its row here and its rules in the operation files.
var builtin = map[schema.GroupKind]Kind{
	deploymentKind: {
		PodSpec: templatePodSpec, ReplicaField: "replicas", Dependencies: true,
		health: deploymentHealth, reflect: reflectFields(deploymentFields...),
		aggregate: sumWithGeneration(deploymentFields[:5]...),
		retain:    []retainer{retainReplicas}, rollout: deploymentRollout,
	},
	replicaSetKind: {
		PodSpec: templatePodSpec, ReplicaField: "replicas", Dependencies: true,
		health: replicaSetHealth, reflect: reflectWhole,
		aggregate: sumWithGeneration("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
		retain:    []retainer{retainReplicas},
	},
	statefulSetKind: {
		PodSpec: templatePodSpec, ReplicaField: "replicas", Dependencies: true,
		health: statefulSetHealth, reflect: reflectFields(statefulSetFields...),
		aggregate: sumWithGeneration(statefulSetFields[:5]...),
		retain:    []retainer{retainReplicas}, rollout: statefulSetRollout,
	},
	daemonSetKind: {
		PodSpec: templatePodSpec, Dependencies: true,
		health: daemonSetHealth, reflect: reflectFields(daemonSetFields...),
		aggregate: sumWithGeneration(daemonSetFields[:7]...),
		rollout:   daemonSetRollout,
	},
	jobKind: {
		PodSpec: templatePodSpec, ReplicaField: "parallelism", Dependencies: true,
		health: jobHealth, reflect: reflectFields("active", "succeeded", "failed", "conditions", "startTime", "completionTime"),
		aggregate: aggregateJob, prune: pruneJob,
	},
	cronJobKind: {
		PodSpec: cronJobPodSpec, Dependencies: true,
		health: cronJobHealth, reflect: reflectWhole, aggregate: aggregateCronJob,
	},
	podKind: {
		PodSpec: podPodSpec, SingleReplica: true, Dependencies: true,
		health: podHealth, reflect: reflectWhole, aggregate: aggregatePod,
	},
	serviceKind: {
		health: serviceHealth, reflect: reflectService, aggregate: aggregateService, prune: pruneService,
	},
	ingressKind: {
		health: ingressHealth, reflect: reflectWhole, aggregate: aggregateLoadBalancer,
	},
	pvKind: {
		health: persistentVolumeHealth, reflect: reflectWhole, aggregate: aggregatePersistentVolume,
	},
	pvcKind: {
		health: persistentVolumeClaimHealth, reflect: reflectWhole, aggregate: aggregatePersistentVolumeClaim,
	},
	pdbKind: {
		health:    podDisruptionBudgetHealth,
		reflect:   reflectFields("disruptionsAllowed", "expectedPods", "desiredHealthy", "currentHealthy", "disruptedPods"),
		aggregate: aggregatePodDisruptionBudget,
	},
	hpaKind: {
		health: horizontalPodAutoscalerHealth, reflect: reflectFields("currentReplicas", "desiredReplicas"),
		aggregate: aggregateHorizontalPodAutoscaler,
	},
	serviceAccount: {prune: pruneTokenSecrets},
}

// Status fields reflected, and summed in this order, for the workloads
// whose aggregation sums the first ones.
var (
	deploymentFields  = []string{"replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas", "observedGeneration"}
	statefulSetFields = []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas", "observedGeneration"}
	daemonSetFields   = []string{
		"currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled",
		"numberReady", "updatedNumberScheduled", "numberUnavailable", "observedGeneration",
	}
)

// Lookup returns the built-in rules of a group and kind, and whether flotilla
// knows the kind.
func Lookup(gk schema.GroupKind) (Kind, bool) {
	k, ok := builtin[gk]
	return k, ok
}

// Of returns the built-in rules for an object's kind (the zero Kind for a
// kind flotilla does not know).
func Of(obj *unstructured.Unstructured) Kind {
	return builtin[obj.GroupVersionKind().GroupKind()]
}

// PodSpecPointer is the JSON pointer of a kind's pod spec
// ("/spec/template/spec"), empty for kinds without pods.
func PodSpecPointer(gk schema.GroupKind) string {
	k, ok := builtin[gk]
	if !ok || k.PodSpec == nil {
		return ""
	}
	out := ""
	for _, p := range k.PodSpec {
		out += "/" + p
	}
	return out
}
