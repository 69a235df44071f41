package engine

import (
	"errors"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// RecordedStatus is a member's status as one Snapshot saw it, kept by a
// front end so that a later plan can be made from the same facts. Terraform
// needs this: it plans a resource twice, once for `terraform plan` and again
// just before applying it, and the second plan must keep every value the
// first one showed. A member that stops answering in between would
// otherwise be planned as unreachable the second time. Apply still checks
// the plan against the live fleet (see Apply), so facts that have changed
// make it refuse rather than apply something else.
type RecordedStatus struct {
	// Status is the status Snapshot gave the member.
	Status api.ClusterStatus `json:"status"`
	// Error is why the status could not be read in full; empty when it was.
	Error string `json:"error,omitempty"`
	// Fits is how many replicas the member's nodes could start when the
	// status was read, per replica requirement of the templates it was
	// recorded for, by FitKey (see Fits); a plan from this status reads
	// its per-node estimate here. Empty when the nodes were not read.
	Fits map[string]int32 `json:"fits,omitempty"`
}

func (r *RecordedStatus) err() error {
	if r.Error == "" {
		return nil
	}
	return errors.New(r.Error)
}

// Recorded returns what Snapshot saw of each member, by name, in the form
// Member.Recorded takes back. clusters and reasons are Snapshot's results.
func Recorded(clusters []api.Cluster, reasons map[string]error) map[string]RecordedStatus {
	out := make(map[string]RecordedStatus, len(clusters))
	for _, c := range clusters {
		r := RecordedStatus{Status: c.Status}
		if err := reasons[c.Name]; err != nil {
			r.Error = err.Error()
		}
		out[c.Name] = r
	}
	return out
}
