package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// A plan from recorded status must come out the same however often it is
// made, so the per-node estimate cannot be read live for it. What a member
// records is not its nodes (a 1,000-node member's free resources, labels
// and taints would be hundreds of kilobytes in every manifest's state) but
// the one figure the scheduler asks of them per template: how many replicas
// with the template's requirements its nodes can start (RecordedStatus.Fits),
// keyed by a short hash of the requirement. A requirement the recording did
// not see (the template's requests or node claim changed since) is
// estimated from the member's nodes as they stand.

// FitKey identifies a replica requirement in RecordedStatus.Fits; empty
// when the requirement cannot be identified (it is then not recorded).
func FitKey(r *estimator.Requirement) string {
	if r.Key() == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(r.Key()))
	return hex.EncodeToString(sum[:8])
}

// requirementsOf is the distinct replica requirements of the templates that
// have replicas or requirements, by FitKey. A template the interpreter
// cannot read has none: planning it reports the error.
func requirementsOf(interp *interpret.Interpreter, templates []*unstructured.Unstructured) map[string]*estimator.Requirement {
	out := map[string]*estimator.Requirement{}
	for _, t := range templates {
		replicas, req, err := interp.GetReplicas(t)
		if err != nil || (replicas == 0 && req == nil) {
			continue
		}
		r := estimator.NewRequirement(req)
		if key := FitKey(r); key != "" {
			out[key] = r
		}
	}
	return out
}

// Fits returns, per member, the room its nodes have for the replica
// requirements of templates (RecordedStatus.Fits), for the members whose
// nodes and pods the last status collection read. Call it right after
// Snapshot over the same members; interp reads the templates' requirements
// (nil: the built-in kinds).
func (e *Engine) Fits(members []Member, interp *interpret.Interpreter, templates []*unstructured.Unstructured) map[string]map[string]int32 {
	reqs := requirementsOf(interp, templates)
	if len(reqs) == 0 {
		return nil
	}
	out := map[string]map[string]int32{}
	for name, nodes := range e.liveNodes(members) {
		fits := make(map[string]int32, len(reqs))
		for key, r := range reqs {
			fits[key] = nodes.MaxReplicas(r)
		}
		out[name] = fits
	}
	return out
}

// liveNodes is the per-node index read with the live status of each member
// that has one (clusterStatus), by name; members with recorded status are
// left out.
func (e *Engine) liveNodes(members []Member) map[string]*estimator.Nodes {
	out := map[string]*estimator.Nodes{}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range members {
		if m.Recorded != nil || m.Connection == nil {
			continue
		}
		if entry, ok := e.status[m.Cluster.Name]; ok && entry.nodes != nil {
			out[m.Cluster.Name] = entry.nodes
		}
	}
	return out
}

// nodeEstimates is the per-node estimator of a plan: a member with recorded
// status answers from its recorded fits; a member read live, or a recorded
// one asked for a requirement its recording lacks, from its nodes as they
// stand (the latter are read here, so a plan shows no figure a later apply
// could not see). A member recorded as unreachable answers nothing: it is
// planned away from anyway. Nil when no member answers.
func (e *Engine) nodeEstimates(ctx context.Context, fleet Fleet, templates []*unstructured.Unstructured) scheduler.NodeEstimator {
	recorded := map[string]map[string]int32{}
	var missing []Member
	reqs := requirementsOf(fleet.Interpreter, templates)
	for _, m := range fleet.Members {
		r := m.Recorded
		if r == nil || m.Connection == nil || r.Error != "" {
			continue
		}
		recorded[m.Cluster.Name] = r.Fits
		for key := range reqs {
			if _, ok := r.Fits[key]; !ok {
				live := m
				live.Recorded = nil
				missing = append(missing, live)
				break
			}
		}
	}
	if len(missing) > 0 {
		// Only the nodes are wanted; the recorded status stays what the
		// plan schedules with.
		e.Snapshot(ctx, missing)
	}
	live := e.liveNodes(append(missing, fleet.Members...))
	if len(live) == 0 && len(recorded) == 0 {
		return nil
	}
	return func(req *api.ReplicaRequirements) func(string) (int32, bool) {
		r := estimator.NewRequirement(req)
		key := FitKey(r)
		return func(cluster string) (int32, bool) {
			if n, ok := recorded[cluster][key]; ok && key != "" {
				return n, true
			}
			if nodes, ok := live[cluster]; ok {
				return nodes.MaxReplicas(r), true
			}
			return 0, false
		}
	}
}
