package engine

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/status"
)

// Observe reads each rendered object back from its cluster: the live
// object and the view of the fields flotilla manages, for drift. objects
// maps a cluster to the object flotilla applied there (or at least its
// kind, namespace and name). Objects are read from one LIST per member,
// kind and namespace, shared by every Observe until the engine next writes
// or StatusTTL passes (see execution.ReadCache).
func (e *Engine) Observe(ctx context.Context, members []Member, objects map[string]*unstructured.Unstructured) []execution.Observation {
	reqs := make([]execution.ObserveRequest, 0, len(objects))
	for _, cluster := range sortedKeys(objects) {
		reqs = append(reqs, execution.ObserveRequest{Cluster: cluster, Object: objects[cluster]})
	}
	return e.executor(members).ObserveLive(ctx, reqs)
}

// Delete removes a template's objects from the listed clusters, or
// releases them when preserve is set. Only objects this fleet owns for this
// template are touched.
func (e *Engine) Delete(ctx context.Context, members []Member, template *unstructured.Unstructured, clusters []string, preserve bool) execution.Result {
	defer e.reads.Reset()
	return e.executor(members).Delete(ctx, execution.DeleteRequest{
		Template:                    api.TemplateRefOf(template),
		Clusters:                    clusters,
		PreserveResourcesOnDeletion: preserve,
	})
}

// Wait waits until the template's objects in clusters are healthy, or
// timeout passes, calling progress after each poll that is not done yet. It
// returns the aggregated status either way. It reads the members as
// Observe does, but afresh on every poll: the lists Observe shares would
// show the objects as they were before the rollout.
func (e *Engine) Wait(ctx context.Context, fleet Fleet, template *unstructured.Unstructured, clusters []string, timeout time.Duration, progress func(status.Progress)) (health.Aggregated, error) {
	fresh := e.executor(fleet.Members)
	fresh.Reads = nil
	opts := status.Options{Template: template, Clusters: clusters, Timeout: timeout, Interpreter: fleet.Interpreter}
	return status.Wait(ctx, opts, fresh.ObserveLive, progress)
}

// ApplyRendered applies objects that need no scheduling, already rendered
// per cluster (a FederatedResourceQuota's ResourceQuotas, whose clusters
// its static assignments name), and prunes req.Prune, through the same
// execution as Apply: server-side apply, ownership, conflict refusal.
func (e *Engine) ApplyRendered(ctx context.Context, members []Member, req execution.ApplyRequest) execution.Result {
	defer e.reads.Reset()
	return e.executor(members).Apply(ctx, req)
}
