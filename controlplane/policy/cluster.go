package policy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ClusterMatches reports whether cluster is selected by affinity, as
// Karmada's util.ClusterMatches does. A nil affinity matches every cluster.
// Otherwise a cluster listed in exclude never matches; the rest must match
// the label selector, the field selector and the cluster names, each when
// set. A selector that cannot be parsed matches nothing, so a bad policy
// never widens a placement. To test many clusters against one affinity, use
// NewClusterMatcher, which parses the label selector once.
func ClusterMatches(affinity *api.ClusterAffinity, cluster *api.Cluster) bool {
	return NewClusterMatcher(affinity)(cluster)
}

// ClusterMatcher reports whether a cluster is selected by the affinity it was made from.
type ClusterMatcher func(cluster *api.Cluster) bool

// NewClusterMatcher compiles affinity into a ClusterMatcher with the
// semantics of ClusterMatches.
func NewClusterMatcher(affinity *api.ClusterAffinity) ClusterMatcher {
	if affinity == nil {
		return func(*api.Cluster) bool { return true }
	}
	var sel labels.Selector
	if affinity.LabelSelector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(affinity.LabelSelector); err != nil {
			return func(*api.Cluster) bool { return false }
		}
	}
	return func(cluster *api.Cluster) bool {
		if cluster == nil || slices.Contains(affinity.ExcludeClusters, cluster.Name) {
			return false
		}
		if sel != nil && !sel.Matches(labels.Set(cluster.Labels)) {
			return false
		}
		if affinity.FieldSelector != nil && !fieldSelectorMatches(affinity.FieldSelector, cluster) {
			return false
		}
		return len(affinity.ClusterNames) == 0 || slices.Contains(affinity.ClusterNames, cluster.Name)
	}
}

// fieldSelectorMatches ANDs the expressions. provider and region behave like
// label requirements over the cluster's non-empty fields (NotIn and
// DoesNotExist match a cluster without the field); zone is matched against
// the cluster's zone list with Karmada's set semantics (see zoneMatches).
func fieldSelectorMatches(fs *api.FieldSelector, cluster *api.Cluster) bool {
	for i := range fs.MatchExpressions {
		expr := &fs.MatchExpressions[i]
		var ok bool
		switch expr.Key {
		case api.ZoneField:
			ok = zoneMatches(expr, clusterZones(cluster))
		case api.ProviderField:
			ok = scalarMatches(expr, cluster.Spec.Provider)
		case api.RegionField:
			ok = scalarMatches(expr, cluster.Spec.Region)
		}
		if !ok {
			return false
		}
	}
	return true
}

// scalarMatches matches a single-valued cluster field; "" means absent.
// Gt and Lt are meaningless for names and never match.
func scalarMatches(expr *corev1.NodeSelectorRequirement, value string) bool {
	switch expr.Operator {
	case corev1.NodeSelectorOpIn:
		return value != "" && slices.Contains(expr.Values, value)
	case corev1.NodeSelectorOpNotIn:
		return value == "" || !slices.Contains(expr.Values, value)
	case corev1.NodeSelectorOpExists:
		return value != ""
	case corev1.NodeSelectorOpDoesNotExist:
		return value == ""
	default:
		return false
	}
}

// clusterZones returns Spec.Zones, falling back to the deprecated Spec.Zone.
func clusterZones(cluster *api.Cluster) []string {
	if len(cluster.Spec.Zones) > 0 {
		return cluster.Spec.Zones
	}
	if cluster.Spec.Zone != "" {
		return []string{cluster.Spec.Zone}
	}
	return nil
}

// zoneMatches follows Karmada's current matchZones (pkg/util/selector.go):
// In needs at least one zone of the cluster listed, NotIn needs none of them
// listed, Exists needs some zone, DoesNotExist needs none. Other operators
// never match. Older Karmada required every zone to be listed for In; a
// cluster spanning several zones is now admitted by any one of them.
func zoneMatches(expr *corev1.NodeSelectorRequirement, zones []string) bool {
	switch expr.Operator {
	case corev1.NodeSelectorOpIn:
		for _, z := range zones {
			if slices.Contains(expr.Values, z) {
				return true
			}
		}
		return false
	case corev1.NodeSelectorOpNotIn:
		for _, z := range zones {
			if slices.Contains(expr.Values, z) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpExists:
		return len(zones) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(zones) == 0
	default:
		return false
	}
}
