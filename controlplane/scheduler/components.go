package scheduler

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// wholeSets reports whether b is scheduled as Karmada's multiple pod
// templates scheduling does (isMultiTemplateSchedulingApplicable): the
// template has components and its placement asks for exactly one cluster
// (a spread constraint by cluster with minGroups and maxGroups 1). Such a
// template goes to a cluster whole; the cluster's available replicas are
// how many complete sets of its components fit there, and dividing
// strategies need one. Karmada cannot tell from an affinity alone that it
// selects one cluster, and neither does flotilla.
func wholeSets(b *Binding) bool {
	if len(b.Components) == 0 {
		return false
	}
	for _, sc := range b.Placement.SpreadConstraints {
		if sc.SpreadByField == api.SpreadByFieldCluster && sc.MinGroups == 1 && sc.MaxGroups == 1 {
			return true
		}
	}
	return false
}

// componentSets is Karmada's general estimator for components
// (maxAvailableComponentSets): how many complete sets of comps the
// cluster's resource summary holds. A set needs the sum of the components'
// replicas in pod slots and, per resource, the sum of replicas × request;
// a requested resource the cluster does not report, or has none left of,
// fits nothing. Without a summary nothing fits; with no replicas at all
// the free pod slots are the answer.
//
// Quantities are read as the single-template estimator reads them
// (millicores for cpu, whole units otherwise), where Karmada reads them by
// the quantity's format; and the cluster's resource models are not used
// (Karmada's first-fit over model nodes): the summary bounds the sets.
func componentSets(cluster *api.Cluster, comps []api.Component) int32 {
	summary := cluster.Status.ResourceSummary
	if summary == nil {
		return 0
	}
	pods := allowedPods(summary)
	if pods <= 0 {
		return 0
	}
	var podsPerSet int64
	perSet := map[corev1.ResourceName]int64{}
	for _, c := range comps {
		podsPerSet += int64(c.Replicas)
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			perSet[name] = saturatingAdd(perSet[name], saturatingMul(scaled(name, q), int64(c.Replicas)))
		}
	}
	if podsPerSet <= 0 {
		return clampInt32(pods)
	}
	sets := pods / podsPerSet
	for name, need := range perSet {
		if need <= 0 {
			continue
		}
		left, ok := leftOf(summary, name)
		if !ok || left <= 0 {
			return 0
		}
		sets = min(sets, left/need)
	}
	return clampInt32(sets)
}
