package render

import (
	"slices"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// PreservedLabels is the state a failover preserved that the template's
// object in cluster receives as labels, as Karmada's binding controller
// decides it (injectReservedLabelState): only when the binding is scheduled
// to that one cluster, the latest graceful eviction task has purgeMode
// Directly, and cluster is not among the clusters the template ran in
// before that failover. nil otherwise.
func PreservedLabels(spec *api.ResourceBindingSpec, cluster string) map[string]string {
	if len(spec.Clusters) != 1 || spec.Clusters[0].Name != cluster || len(spec.GracefulEvictionTasks) == 0 {
		return nil
	}
	task := spec.GracefulEvictionTasks[len(spec.GracefulEvictionTasks)-1]
	if task.PurgeMode != api.PurgeModeDirectly && task.PurgeMode != api.PurgeModeImmediately {
		return nil
	}
	if slices.Contains(task.ClustersBeforeFailover, cluster) || len(task.PreservedLabelState) == 0 {
		return nil
	}
	return task.PreservedLabelState
}
