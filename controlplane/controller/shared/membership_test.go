package shared

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// TestNotReadyReason: the Ready reason the cluster status controller writes
// for each way a member cannot be used, including the membership conflict
// of a second Cluster (or control plane) for one physical cluster.
func TestNotReadyReason(t *testing.T) {
	conflict := &member.AlreadyRegisteredError{Host: "https://127.0.0.1:6443", Fleet: "test", Member: "m", WantFleet: "test", WantMember: "m-twin"}
	cases := map[string]struct {
		err  error
		want string
	}{
		"credentials refused":      {err: fmt.Errorf("cluster exec: secret flotilla-system/exec: %w", ErrCredentialsRefused), want: api.ReasonCredentialsRefused},
		"registered as another":    {err: fmt.Errorf("cluster m-twin: %w", conflict), want: api.ReasonMembershipConflict},
		"not connected":            {err: fmt.Errorf("cluster m is %w: connection refused", api.ErrNotConnected), want: api.ReasonClusterNotReachable},
		"marker could not be read": {err: errors.New("register cluster m: get ConfigMap flotilla-system/flotilla-membership: forbidden"), want: api.ReasonClusterNotReachable},
	}
	for name, tc := range cases {
		if got := notReadyReason(tc.err); got != tc.want {
			t.Errorf("%s: notReadyReason(%v) = %q, want %q", name, tc.err, got, tc.want)
		}
	}
}
