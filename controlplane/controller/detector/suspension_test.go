package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestMergeSuspension follows Karmada's MergePolicySuspension.
func TestMergeSuspension(t *testing.T) {
	all := &api.Suspension{Dispatching: ptr.To(true)}
	cases := map[string]struct {
		have *api.BindingSuspension
		from *api.Suspension
		want *api.BindingSuspension
	}{
		"none":                      {},
		"policy suspends":           {from: all, want: &api.BindingSuspension{Suspension: *all}},
		"lifted clears the binding": {have: &api.BindingSuspension{Suspension: *all}},
		"lifted keeps scheduling":   {have: &api.BindingSuspension{Suspension: *all, Scheduling: ptr.To(true)}, want: &api.BindingSuspension{Scheduling: ptr.To(true)}},
		"policy replaces, keeps scheduling": {
			have: &api.BindingSuspension{Suspension: *all, Scheduling: ptr.To(true)},
			from: &api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"b"}}},
			want: &api.BindingSuspension{Suspension: api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"b"}}}, Scheduling: ptr.To(true)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mergeSuspension(tc.have, tc.from)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
