package terraform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// Terraform plans each resource twice: for `terraform plan` (whose result a
// saved plan holds) and again right before applying it, and it stops with
// "Provider produced inconsistent final plan" if the second plan changes a
// value the first one knew. Both plans get the same configuration, prior
// state and prior private state, and nothing tells them apart. So that the
// second plan comes out the same, ModifyPlan does not probe the members the
// object runs in: it plans from the status the refresh just before the
// first plan recorded in private state (Read, recordMemberFacts). Apply
// then checks the plan against the live fleet and, when a member changed
// in between (it stopped answering, say), refuses with "The plan no longer
// holds", naming the cluster, applying nothing.
//
// Only the members refresh reaches are recorded, those in connections: a
// recorded fact nothing refreshes would keep a recovered member out of
// every later plan. Other members (a new manifest's, a cluster just added to
// clusters) are probed while planning, as before. Create and Update record
// no facts, so a plan with -refresh=false also probes.
//
// The plan estimates replicas node by node (engine.Fleet.PerNode), so the
// facts also hold, per member, the room its nodes had for the templates'
// replica requirements (engine.RecordedStatus.Fits): a few bytes per
// requirement, whatever the member's size. A requirement changed in the
// configuration since the refresh has no recorded figure: the plan reads
// that member's nodes for it, as it probes the members above.

// memberFacts is one member's status as the last refresh saw it.
type memberFacts struct {
	// Connection is a hash of the recorded connection the status was read
	// through: facts of another connection (a cluster repointed in the
	// configuration) are not used.
	Connection string `json:"connection"`
	engine.RecordedStatus
}

// connectionHash identifies a connection as connections records it.
func connectionHash(recorded string) string {
	sum := sha256.Sum256([]byte(recorded))
	return hex.EncodeToString(sum[:8])
}

// recordMemberFacts reads the status of the members refresh reaches and
// returns it for private state, each status trimmed to what planning these
// templates reads.
func (r *manifestResource) recordMemberFacts(ctx context.Context, members []engine.Member, interp *interpret.Interpreter, templates []*unstructured.Unstructured) map[string]memberFacts {
	reachable := make([]engine.Member, 0, len(members))
	for _, m := range members {
		if m.Connection != nil {
			reachable = append(reachable, m)
		}
	}
	if len(reachable) == 0 {
		return nil
	}
	clusters, reasons := r.data.Engine.Snapshot(ctx, reachable)
	recorded := engine.Recorded(clusters, reasons)
	fits := r.data.Engine.Fits(reachable, interp, templates)
	out := make(map[string]memberFacts, len(reachable))
	for _, m := range reachable {
		b, err := json.Marshal(m.Connection)
		if err != nil {
			continue // not recorded: the next plan probes this member
		}
		status := recorded[m.Cluster.Name]
		status.Status = trimmedStatus(status.Status, templates)
		status.Fits = fits[m.Cluster.Name]
		out[m.Cluster.Name] = memberFacts{Connection: connectionHash(string(b)), RecordedStatus: status}
	}
	return out
}

// withRecordedFacts sets Member.Recorded on every member whose facts the
// last refresh recorded through the connection the configuration gives it
// now. members is the caller's own slice.
func withRecordedFacts(members []engine.Member, facts map[string]memberFacts) {
	for i := range members {
		f, ok := facts[members[i].Cluster.Name]
		if !ok || members[i].Connection == nil {
			continue
		}
		b, err := json.Marshal(members[i].Connection)
		if err != nil || connectionHash(string(b)) != f.Connection {
			continue
		}
		status := f.RecordedStatus
		members[i].Recorded = &status
	}
}

// trimmedStatus keeps of a member's API enablements only the group versions
// of these templates, which is all the scheduler's API filter reads of it,
// so private state stays small. A list that shrinks to nothing keeps one
// entry: an empty list means "not collected" to the filter, which then
// admits any kind.
func trimmedStatus(status api.ClusterStatus, templates []*unstructured.Unstructured) api.ClusterStatus {
	if len(status.APIEnablements) == 0 {
		return status
	}
	wanted := map[string]bool{}
	for _, t := range templates {
		wanted[t.GetAPIVersion()] = true
	}
	var kept []api.APIEnablement
	for _, e := range status.APIEnablements {
		if wanted[e.GroupVersion] {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		kept = []api.APIEnablement{{GroupVersion: status.APIEnablements[0].GroupVersion}}
	}
	status.APIEnablements = kept
	return status
}
