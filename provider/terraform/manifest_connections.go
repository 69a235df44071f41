package terraform

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// The fleet inputs of flotilla_manifest (clusters and policies) are
// write-only: Terraform passes them to validate, plan and apply but never
// stores them, so neither the plan nor the state carries ten clusters and
// two policies per manifest, and a changed fact that moves nothing changes
// nothing. Refresh and destroy get no configuration, so the connections of
// the clusters the object is or was placed in are recorded in the computed,
// sensitive connections attribute, one JSON string per cluster.

// connectionsType is the connections attribute's type.
var connectionsType = tftypes.Map{ElementType: tftypes.String}

// connectionsValue is the connections attribute for the clusters in names:
// each member's connection from the configuration, or, for a cluster no
// longer configured, what prior recorded, so a prune or destroy can still
// reach it. A connection Terraform does not know yet is unknown.
func connectionsValue(members []engine.Member, names map[string]bool, prior map[string]tftypes.Value) (tftypes.Value, error) {
	byName := make(map[string]engine.Member, len(members))
	for _, m := range members {
		byName[m.Cluster.Name] = m
	}
	elems := map[string]tftypes.Value{}
	for name := range names {
		m, ok := byName[name]
		switch {
		case ok && m.Connection == nil:
			elems[name] = stringUnknown
		case ok:
			b, err := json.Marshal(m.Connection)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("record the connection of cluster %s: %w", name, err)
			}
			elems[name] = tftypes.NewValue(tftypes.String, string(b))
		default:
			if v, found := prior[name]; found {
				elems[name] = v
			}
		}
	}
	return tftypes.NewValue(connectionsType, elems), nil
}

// rawConnections reads the elements of a known connections value; null
// reads as none.
func rawConnections(v tftypes.Value) (map[string]tftypes.Value, error) {
	if v.IsNull() || !v.IsKnown() {
		return nil, nil
	}
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("connections: %w", err)
	}
	return elems, nil
}

// membersFromConnections turns a recorded connections value back into
// members that refresh and destroy can reach. They carry no facts, which
// neither needs. A recorded connection that would run a command or read a
// file trust does not allow is left out and listed in refused, by cluster
// (see trust.go).
func membersFromConnections(v tftypes.Value, trust trustedConnections) (members []engine.Member, refused map[string]error, err error) {
	elems, err := rawConnections(v)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(elems))
	for name := range elems {
		names = append(names, name)
	}
	sort.Strings(names)
	members = make([]engine.Member, 0, len(names))
	refused = map[string]error{}
	for _, name := range names {
		m := engine.Member{}
		m.Cluster.Name = name
		if s := rawString(elems[name]); s != "" {
			var c member.Connection
			if json.Unmarshal([]byte(s), &c) != nil {
				// The decoder's error could quote part of a credential.
				return nil, nil, fmt.Errorf("connections[%q] is not a connection this provider recorded", name)
			}
			if err := trust.check(c); err != nil {
				refused[name] = fmt.Errorf("cluster %s: %w", name, err)
				continue
			}
			m.Connection = &c
		}
		members = append(members, m)
	}
	return members, refused, nil
}

// refusedSummary lists refused connections, one cluster a line.
func refusedSummary(refused map[string]error) string {
	lines := make([]string, 0, len(refused))
	for _, name := range sortedKeys(refused) {
		lines = append(lines, "  "+refused[name].Error())
	}
	return strings.Join(lines, "\n")
}
