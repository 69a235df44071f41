package detector

import "github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"

// mergeSuspension is Karmada's MergePolicySuspension: the binding takes the
// policy's dispatch suspension and keeps its own scheduling suspension.
func mergeSuspension(have *api.BindingSuspension, from *api.Suspension) *api.BindingSuspension {
	var scheduling *bool
	if have != nil {
		scheduling = have.Scheduling
	}
	if from == nil && scheduling == nil {
		return nil
	}
	out := &api.BindingSuspension{Scheduling: scheduling}
	if from != nil {
		out.Suspension = *from.DeepCopy()
	}
	return out
}
