package terraform

import (
	"crypto/sha256"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
)

// maxDecoded bounds each table of the decode cache. A provider process
// lives for one Terraform command, in which a configuration has a handful
// of distinct fleets; when a table fills up it starts afresh.
const maxDecoded = 512

// fleetDecoder decodes the clusters and policies that flotilla_manifest
// receives by value. Every manifest of a configuration usually gets the same
// clusters and shares policies, and Terraform sends each value to several
// calls (validate, plan, read, apply), so decoding (conversion, Karmada's
// defaults and validation) is done once per distinct value in the process.
// Decoding is a pure function of the value, so the cache is keyed by content
// alone and shared by every provider instance in the process.
var fleetDecoder = &decodeCache{}

type decodeCache struct {
	mu          sync.Mutex
	memberTable map[[sha256.Size]byte]decodedMembers
	policyTable map[[sha256.Size]byte]decodedPolicies
}

type decodedMembers struct {
	members []engine.Member
	known   bool
	diags   diag.Diagnostics
}

type decodedPolicies struct {
	policies []*policyValue
	known    bool
	diags    diag.Diagnostics
}

// members is membersFromRaw, cached. Callers must not modify what it
// returns beyond the slice itself, which is theirs.
func (c *decodeCache) members(v tftypes.Value) ([]engine.Member, bool, diag.Diagnostics) {
	key, err := contentKey(attrClusters, v)
	if err != nil {
		return membersFromRaw(v)
	}
	c.mu.Lock()
	hit, ok := c.memberTable[key]
	c.mu.Unlock()
	if !ok {
		hit.members, hit.known, hit.diags = membersFromRaw(v)
		c.mu.Lock()
		if c.memberTable == nil || len(c.memberTable) >= maxDecoded {
			c.memberTable = map[[sha256.Size]byte]decodedMembers{}
		}
		c.memberTable[key] = hit
		c.mu.Unlock()
	}
	return slices.Clone(hit.members), hit.known, slices.Clone(hit.diags)
}

// policies is policiesFromTerraform for the attribute called name, cached.
// The policies it returns are shared: callers must not modify them.
func (c *decodeCache) policies(v tftypes.Value, name string) ([]*policyValue, bool, diag.Diagnostics) {
	key, err := contentKey(name, v)
	if err != nil {
		return policiesFromTerraform(v, path.Root(name))
	}
	c.mu.Lock()
	hit, ok := c.policyTable[key]
	c.mu.Unlock()
	if !ok {
		hit.policies, hit.known, hit.diags = policiesFromTerraform(v, path.Root(name))
		c.mu.Lock()
		if c.policyTable == nil || len(c.policyTable) >= maxDecoded {
			c.policyTable = map[[sha256.Size]byte]decodedPolicies{}
		}
		c.policyTable[key] = hit
		c.mu.Unlock()
	}
	return slices.Clone(hit.policies), hit.known, slices.Clone(hit.diags)
}
