package shared

import (
	"slices"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// LabelAttached marks a ResourceBinding the dependencies distributor created
// for a dependency of workloads with propagateDeps ("attached" in Karmada's
// words). Only such bindings are written or deleted by the distributor, and
// the detector leaves them alone.
const LabelAttached = "resourcebinding.flotilla.io/dependencies-distributor"

// dependencyKinds are the kinds interpret.GetDependencies names, all in core/v1.
var dependencyKinds = interpret.DependencyKinds

// Attached reports whether rb is an attached binding of the dependencies
// distributor.
func Attached(rb *workv1.ResourceBinding) bool {
	return rb.Labels[LabelAttached] == "true"
}

// SnapshotOf is the workload binding as its dependencies see it: its
// clusters, plus the clusters it is being gracefully evicted from, where its
// copy still runs and still needs them.
func SnapshotOf(rb *workv1.ResourceBinding) api.BindingSnapshot {
	clusters := slices.Clone(rb.Spec.Clusters)
	for _, t := range rb.Spec.GracefulEvictionTasks {
		if keepsCopy(t) && !slices.ContainsFunc(clusters, func(tc api.TargetCluster) bool { return tc.Name == t.FromCluster }) {
			clusters = append(clusters, api.TargetCluster{Name: t.FromCluster})
		}
	}
	slices.SortFunc(clusters, func(a, b api.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return api.BindingSnapshot{Namespace: rb.Namespace, Name: rb.Name, Clusters: clusters}
}

// DependentClusters is the union of the clusters of the workloads that
// require a dependency, Karmada's rule. A dependency has no replicas.
func DependentClusters(requiredBy []api.BindingSnapshot) []api.TargetCluster {
	var out []api.TargetCluster
	for _, s := range requiredBy {
		for _, tc := range s.Clusters {
			if !slices.ContainsFunc(out, func(o api.TargetCluster) bool { return o.Name == tc.Name }) {
				out = append(out, api.TargetCluster{Name: tc.Name})
			}
		}
	}
	slices.SortFunc(out, func(a, b api.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Detach makes an attached binding an ordinary one, for the detector taking
// it over when a policy claims the dependency itself.
func Detach(rb *workv1.ResourceBinding) {
	delete(rb.Labels, LabelAttached)
	rb.Spec.RequiredBy = nil
}
