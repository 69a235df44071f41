package member

import (
	"errors"
	"testing"
)

// TestMarkerDecision is the pure part of "one physical cluster, one name":
// which markers a registration of fleet "prod", member "east" and a given
// owner accepts, and the refusal naming what the marker records otherwise.
func TestMarkerDecision(t *testing.T) {
	const host = "https://127.0.0.1:6443"
	marker := func(fleet, member, owner string) map[string]string {
		d := map[string]string{MembershipFleetKey: fleet, MembershipMemberKey: member}
		if owner != "" {
			d[MembershipOwnerKey] = owner
		}
		return d
	}
	cases := map[string]struct {
		data  map[string]string
		owner string
		// want is the refusal's message; empty when the marker is accepted.
		want string
	}{
		"same fleet and name, Terraform": {data: marker("prod", "east", "")},
		"same fleet, name and control plane": {
			data: marker("prod", "east", "controlplane/a"), owner: "controlplane/a",
		},
		"another name in the fleet": {
			data: marker("prod", "west", ""),
			want: `cluster at https://127.0.0.1:6443 is already registered as "west" in fleet "prod"; refusing to register it as "east" in fleet "prod"`,
		},
		"another fleet": {
			data: marker("dev", "east", ""),
			want: `cluster at https://127.0.0.1:6443 is already registered as "east" in fleet "dev"; refusing to register it as "east" in fleet "prod"`,
		},
		"a control plane's marker, Terraform registering": {
			data: marker("prod", "east", "controlplane/a"),
			want: `cluster at https://127.0.0.1:6443 is already registered as "east" in fleet "prod" by controlplane/a; refusing to register it for Terraform`,
		},
		"Terraform's marker, a control plane registering": {
			data: marker("prod", "east", ""), owner: "controlplane/a",
			want: `cluster at https://127.0.0.1:6443 is already registered as "east" in fleet "prod" by Terraform; refusing to register it for controlplane/a`,
		},
		"another control plane of the same fleet name": {
			data: marker("prod", "east", "controlplane/a"), owner: "controlplane/b",
			want: `cluster at https://127.0.0.1:6443 is already registered as "east" in fleet "prod" by controlplane/a; refusing to register it for controlplane/b`,
		},
		"an empty marker": {
			data: map[string]string{},
			want: `cluster at https://127.0.0.1:6443 is already registered as "" in fleet ""; refusing to register it as "east" in fleet "prod"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			accepted := recordsExactly(tc.data, "prod", "east", tc.owner)
			if accepted != (tc.want == "") {
				t.Fatalf("recordsExactly(%v, prod, east, %q) = %t, want %t", tc.data, tc.owner, accepted, tc.want == "")
			}
			if accepted {
				return
			}
			err := error(refusal(host, tc.data, "prod", "east", tc.owner))
			if !errors.Is(err, ErrAlreadyRegistered) {
				t.Errorf("refusal does not wrap ErrAlreadyRegistered: %v", err)
			}
			if err.Error() != tc.want {
				t.Errorf("refusal = %q, want %q", err.Error(), tc.want)
			}
		})
	}
}
