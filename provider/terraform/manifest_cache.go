package terraform

import (
	"crypto/sha256"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
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
	memberTable decodeTable[engine.Member]
	policyTable decodeTable[*policyValue]
	// interpreterTable holds one Interpreter per distinct
	// resource_interpreters value: building it compiles every script.
	interpreterTable decodeTable[*interpreterSet]
}

// decodeTable is one table of the cache: a decoded list per content key.
type decodeTable[T any] struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]decoded[T]
}

type decoded[T any] struct {
	items []T
	known bool
	diags diag.Diagnostics
}

// get returns decode(v), decoding it only the first time this content is
// seen under prefix. The slices it returns are the caller's; their
// elements are shared.
func (t *decodeTable[T]) get(prefix string, v tftypes.Value, decode func(tftypes.Value) ([]T, bool, diag.Diagnostics)) ([]T, bool, diag.Diagnostics) {
	key, err := contentKey(prefix, v)
	if err != nil {
		return decode(v)
	}
	t.mu.Lock()
	hit, ok := t.entries[key]
	t.mu.Unlock()
	if !ok {
		hit.items, hit.known, hit.diags = decode(v)
		t.mu.Lock()
		if t.entries == nil || len(t.entries) >= maxDecoded {
			t.entries = map[[sha256.Size]byte]decoded[T]{}
		}
		t.entries[key] = hit
		t.mu.Unlock()
	}
	return slices.Clone(hit.items), hit.known, slices.Clone(hit.diags)
}

// members is membersFromRaw, cached. Callers must not modify what it
// returns beyond the slice itself, which is theirs.
func (c *decodeCache) members(v tftypes.Value) ([]engine.Member, bool, diag.Diagnostics) {
	return c.memberTable.get(attrClusters, v, membersFromRaw)
}

// policies is policiesFromTerraform for the attribute called name, cached.
// The policies it returns are shared: callers must not modify them.
func (c *decodeCache) policies(v tftypes.Value, name string) ([]*policyValue, bool, diag.Diagnostics) {
	return c.policyTable.get(name, v, func(v tftypes.Value) ([]*policyValue, bool, diag.Diagnostics) {
		return policiesFromTerraform(v, path.Root(name))
	})
}

// interpreterSet is a manifest's resource_interpreters: the
// customizations as given, and the Interpreter that runs them.
type interpreterSet struct {
	customizations []api.ResourceInterpreterCustomization
	interpreter    *interpret.Interpreter
}

// interpreters decodes resource_interpreters and builds the Interpreter
// that runs them, cached. It is nil when the attribute is null or empty,
// and nil with error diagnostics when a customization is refused; two
// customizations scripting the same operation of one kind are refused on
// the attribute, naming both.
func (c *decodeCache) interpreters(v tftypes.Value) (*interpreterSet, bool, diag.Diagnostics) {
	out, known, diags := c.interpreterTable.get(attrResourceInterpreters, v, func(v tftypes.Value) ([]*interpreterSet, bool, diag.Diagnostics) {
		at := path.Root(attrResourceInterpreters)
		rics, known, diags := interpretersFromTerraform(v, at)
		if len(rics) == 0 || diags.HasError() {
			return nil, known, diags
		}
		in, err := interpret.New(rics)
		if err != nil {
			diags.AddAttributeError(at, "Invalid resource interpreters", err.Error())
			return nil, known, diags
		}
		return []*interpreterSet{{customizations: rics, interpreter: in}}, known, diags
	})
	if len(out) == 0 {
		return nil, known, diags
	}
	return out[0], known, diags
}
