package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Binding is everything Schedule needs to know about one template: what it
// is, how many replicas it wants, where its policy allows it to go and where
// it ran before.
type Binding struct {
	// Resource is the template. APIVersion and Kind are checked against each
	// cluster's API enablements; UID seeds the Webster tie-break.
	Resource api.ObjectReference

	// Replicas is the desired replica count. Zero with no resource
	// requirements means the template is not a workload (a ConfigMap, a
	// Service): it goes to every selected cluster with zero replicas. Zero
	// with requirements (see HasRequirements) is a workload scaled to zero:
	// it goes nowhere, as in Karmada without
	// --enable-empty-workload-propagation.
	Replicas int32

	// ReplicaRequirements is what one replica requests; nil means nothing
	// beyond a pod slot.
	ReplicaRequirements *api.ReplicaRequirements

	// Components are the pod templates of a multi-component workload
	// (api.ResourceBindingSpec.Components); Replicas and
	// ReplicaRequirements are then zero and nil. With a placement that
	// asks for exactly one cluster, the cluster chosen is one where a
	// complete set of the components fits (see wholeSets); otherwise the
	// template goes, whole, to every selected cluster, as a non-workload
	// does, as in Karmada.
	Components []api.Component

	// Placement is the claiming policy's placement.
	Placement api.Placement

	// Policy names the claiming policy in messages, e.g. "PropagationPolicy
	// default/web"; empty when unknown.
	Policy string

	// Previous is the last scheduling result, used for stickiness and for
	// steady scale-up and scale-down.
	Previous []api.TargetCluster

	// PreviousAffinityName is the ClusterAffinities term the previous result
	// used. Scheduling resumes from that term, as Karmada does, so a template
	// that fell back to a later term does not flap back and forth.
	PreviousAffinityName string

	// EvictingClusters are clusters the template is being gracefully evicted
	// from; they receive nothing new.
	EvictingClusters []string

	// Fresh asks for a complete recalculation: replica assignment ignores
	// the previous split and ClusterAffinities are tried from the first term.
	// Filters and the locality score still see Previous, as in Karmada. It is
	// the equivalent of Karmada's rescheduleTriggeredAt.
	Fresh bool

	// QuotaRoom is, per cluster, how many more replicas the template may
	// place there beyond its previous result under the cluster's static
	// FederatedResourceQuota assignment; a cluster not listed is not
	// limited. It caps the available replicas of dynamic division and
	// spreading, so the division respects what remains of each quota.
	QuotaRoom map[string]int64
	// NodeEstimates, when set, is the per-node estimator (Karmada's
	// accurate estimator): for the template's replica requirements it gives
	// a function answering, per cluster, how many replicas the cluster can
	// start node by node, or false when it has no per-node figures (a Pull
	// cluster, a member not watched yet). Where it answers, the cluster's
	// available replicas are the smaller of its answer and the general
	// estimator's, as Karmada takes the minimum over its estimators. Nil,
	// as in a plan, means the general estimator alone.
	NodeEstimates NodeEstimator

	// Now is when the tolerationSeconds of NoExecute tolerations are
	// counted against the taints' timeAdded (NoExecuteUntolerated). The
	// continuous driver passes its clock's time; zero, as in a plan,
	// counts none: a matching toleration then tolerates for good.
	Now time.Time
}

// BindingFor builds the scheduler input from a ResourceBinding and the
// placement of the policy that claims its template. Previous results,
// eviction tasks and the observed affinity term come from rb; Fresh is set
// when spec.rescheduleTriggeredAt is later than status.lastScheduledTime.
func BindingFor(rb *api.ResourceBinding, placement api.Placement) Binding {
	b := Binding{
		Resource:             rb.Spec.Resource,
		Replicas:             rb.Spec.Replicas,
		ReplicaRequirements:  rb.Spec.ReplicaRequirements,
		Components:           rb.Spec.Components,
		Placement:            placement,
		Previous:             rb.Spec.Clusters,
		PreviousAffinityName: rb.Status.SchedulerObservedAffinityName,
	}
	if claim := policy.BindingClaim(rb); claim != nil {
		b.Policy = DescribePolicy(claim.Kind, rb.Spec.Resource.Namespace, claim.Name)
	}
	for _, task := range rb.Spec.GracefulEvictionTasks {
		b.EvictingClusters = append(b.EvictingClusters, task.FromCluster)
	}
	if t, last := rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime; t != nil && last != nil {
		b.Fresh = t.After(last.Time)
	}
	return b
}

// DescribePolicy names a policy in messages: "PropagationPolicy
// default/web", or "ClusterPropagationPolicy web" (namespace unused).
func DescribePolicy(kind, namespace, name string) string {
	if kind == api.KindClusterPropagationPolicy || namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// NodeEstimator prepares the per-node estimate of one replica requirement
// (see Binding.NodeEstimates); the function it returns is called once per
// candidate cluster of a decision, and may be called from several
// goroutines.
type NodeEstimator func(req *api.ReplicaRequirements) func(cluster string) (int32, bool)

// Result is a scheduling decision.
type Result struct {
	// Clusters are the chosen clusters and their replicas, sorted by name.
	// Divided workloads leave out clusters that got no replicas.
	Clusters []api.TargetCluster

	// AffinityName is the ClusterAffinities term that was used, or "" when
	// the placement has no ClusterAffinities.
	AffinityName string

	// Reasons says, for every cluster of the snapshot that is not in
	// Clusters, why not.
	Reasons Reasons

	// NodeLimited lists the clusters of Clusters whose room for the
	// template the per-node estimate (Binding.NodeEstimates) made smaller
	// than the cluster-wide one, sorted by name.
	NodeLimited []NodeLimit
}

// NodeLimit is a cluster whose nodes hold fewer replicas than its
// cluster-wide free resources would allow.
type NodeLimit struct {
	// Cluster is the cluster's name.
	Cluster string
	// PerNode is the room the per-node estimate gives.
	PerNode int32
	// ClusterWide is the room the cluster's summed free resources give.
	ClusterWide int32
	// Models says PerNode comes from the cluster's resource models
	// (status.resourceSummary.allocatableModelings, its nodes counted by
	// grade), not from its nodes read one by one: the answer of a member
	// whose nodes were not read, as in preview.
	Models bool
}

// String is the limit as plans show it.
func (l NodeLimit) String() string {
	how := "per-node fit"
	if l.Models {
		how = "per-node fit by resource models"
	}
	return fmt.Sprintf("%s: room for %d; cluster-wide free would allow %d", how, l.PerNode, l.ClusterWide)
}

// Reasons says why clusters were left out of a decision. It keeps the
// decision's list and builds a lookup by name only when asked: a control
// plane deciding for thousands of templates over thousands of clusters
// reads none of them, and filling a map per decision cost more than the
// division itself at 5,000 clusters (issue 23).
type Reasons struct {
	list []rejection
}

// Len is how many clusters have a reason.
func (r Reasons) Len() int { return len(r.list) }

// Map returns the reasons by cluster name; nil when there are none.
func (r Reasons) Map() map[string]string { return reasonMap(r.list) }

// Stage names where in the pipeline a FitError arose.
type Stage string

const (
	// StageFilter means no cluster passed the filters.
	StageFilter Stage = "filter"
	// StageSelect means the spread constraints could not be met.
	StageSelect Stage = "select"
	// StageAssign means the replicas could not be assigned.
	StageAssign Stage = "assign"
)

// FitError says why a template could not be scheduled, with a reason for
// every cluster of the snapshot, so "why not cluster X" always has an answer.
type FitError struct {
	// Stage is where scheduling failed.
	Stage Stage
	// AffinityName is the ClusterAffinities term being tried, if any.
	AffinityName string
	// NumAllClusters is the size of the snapshot.
	NumAllClusters int
	// Message is the overall reason for select and assign failures; empty
	// for filter failures, where the per-cluster reasons say it all.
	Message string
	// Reasons maps each cluster name to why it was not used, or for feasible
	// clusters to what the scheduler knew about them.
	Reasons map[string]string
	// Policy names the claiming policy (Binding.Policy), said with
	// Unknown.
	Policy string
	// Unknown are the names the affinity lists that are no cluster of the
	// fleet, said first: a typo otherwise reads as every cluster failing
	// the affinity.
	Unknown []UnknownCluster
}

// Error reads like "0/3 clusters are available: east: untolerated taint
// {dedicated=gpu:NoSchedule}; west: ...", clusters sorted by name, after
// the policy and the names it lists that no cluster has, if any.
func (e *FitError) Error() string {
	var b strings.Builder
	b.WriteString(unknownPrefix(e.Policy, e.Unknown))
	if e.AffinityName != "" {
		fmt.Fprintf(&b, "cluster affinity term %q: ", e.AffinityName)
	}
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		fmt.Fprintf(&b, "0/%d clusters are available", e.NumAllClusters)
	}
	names := make([]string, 0, len(e.Reasons))
	for name := range e.Reasons {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(e.Reasons[name])
	}
	return b.String()
}

// HasRequirements reports whether req asks for anything of a node: a positive
// resource request or a node claim (node selector, tolerations, required node
// affinity). It is the condition under which Karmada's
// GenerateReplicaRequirements returns requirements at all, and so whether
// Karmada's AssignReplicas treats a zero-replica template as a workload.
// Namespace and PriorityClassName alone do not count.
func HasRequirements(req *api.ReplicaRequirements) bool {
	if req == nil {
		return false
	}
	if req.NodeClaim != nil {
		return true
	}
	for _, q := range req.ResourceRequest {
		if q.Sign() > 0 {
			return true
		}
	}
	return false
}
