package terraform

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Every RPC of flotilla_manifest (ValidateConfig, ModifyPlan, Read, Create,
// Update, Delete) and the placement data source read their request through
// decodeManifest, once: the manifest's inputs as engine input, and what the
// plan and the prior state record. It works on the raw Terraform values
// (see manifest_raw.go); the recorded rendered objects stay JSON strings
// until a caller needs their content.

// manifestRecord is what a plan or a state of flotilla_manifest holds beyond
// the inputs. The JSON of rendered and dependencies_rendered is not parsed.
type manifestRecord struct {
	id           string
	placement    map[string]int64
	policy       string
	affinityTerm string
	suspended    []string
	// placementRaw and suspendedRaw are placement and suspended as given,
	// to tell whether a new plan changes them.
	placementRaw         tftypes.Value
	suspendedRaw         tftypes.Value
	rendered             tftypes.Value
	stages               tftypes.Value
	dependenciesRendered tftypes.Value
	connections          tftypes.Value
	status               tftypes.Value
	rescheduleTrigger    tftypes.Value
	waitForRollout       bool
	// dependencies is the dependencies attribute as given: a state's is
	// decoded only by dependencyClusters, when private state lacks it.
	dependencies tftypes.Value
}

// manifestRequest is one RPC's flotilla_manifest, decoded.
type manifestRequest struct {
	// in is the engine input: from the plan, with the write-only fleet from
	// the configuration, when there is a plan; else from the configuration
	// (ValidateConfig, the data source); else from the state (Read,
	// Delete). When there is a state, its id settles the template's scope.
	in manifestInputs
	// planned is the plan's record; zero without a plan.
	planned manifestRecord
	// recorded is the prior state's record; zero without a state.
	recorded manifestRecord
	// hasState is set when the request has a prior state.
	hasState bool
}

// decodeManifest decodes what an RPC gets: its configuration, plan and
// prior state, each raw and null when the RPC has none.
func decodeManifest(config, plan, state tftypes.Value) (manifestRequest, diag.Diagnostics) {
	var out manifestRequest
	var diags diag.Diagnostics
	read := func(v tftypes.Value, what string) map[string]tftypes.Value {
		if v.IsNull() {
			return nil
		}
		attrs, err := rawAttributes(v)
		if err != nil {
			diags.AddError("Cannot read the "+what, err.Error())
		}
		return attrs
	}
	configAttrs, planAttrs, stateAttrs := read(config, "configuration"), read(plan, "plan"), read(state, "state")
	if diags.HasError() {
		return out, diags
	}
	var attrs map[string]tftypes.Value
	switch {
	case planAttrs != nil:
		attrs = withWriteOnly(planAttrs, configAttrs)
		out.planned, diags = recordFrom(planAttrs, "plan")
	case configAttrs != nil:
		attrs = configAttrs
	default:
		attrs = stateAttrs
	}
	if stateAttrs != nil {
		out.hasState = true
		var d diag.Diagnostics
		out.recorded, d = recordFrom(stateAttrs, "state")
		diags.Append(d...)
		if planAttrs != nil {
			// The recorded id holds the scope decided when the object was
			// first planned (manifest_scope.go).
			attrs[attrID] = stateAttrs[attrID]
		}
	}
	in, d := expandRaw(attrs)
	out.in = in
	diags.Append(d...)
	return out, diags
}

// recordFrom reads the record of a plan or state (what names which).
func recordFrom(attrs map[string]tftypes.Value, what string) (manifestRecord, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := manifestRecord{
		id:                   rawString(attrs[attrID]),
		policy:               rawString(attrs[attrPolicy]),
		affinityTerm:         rawString(attrs[attrAffinityTerm]),
		placementRaw:         attrs[attrPlacement],
		suspendedRaw:         attrs[attrSuspendedClusters],
		rendered:             attrs[attrRendered],
		stages:               attrs[attrStages],
		dependenciesRendered: attrs[attrDependenciesRendered],
		connections:          attrs[attrConnections],
		status:               attrs[attrStatus],
		rescheduleTrigger:    attrs[attrRescheduleTrigger],
		waitForRollout:       rawBool(attrs[attrWaitForRollout]),
		dependencies:         attrs[attrDependencies],
	}
	var err error
	if r.placement, err = rawPlacement(attrs[attrPlacement]); err != nil {
		diags.AddAttributeError(path.Root(attrPlacement), "Cannot read the placement of the "+what, err.Error())
	}
	if r.suspended, err = rawSuspended(attrs[attrSuspendedClusters]); err != nil {
		diags.AddAttributeError(path.Root(attrSuspendedClusters), "Cannot read the suspended clusters of the "+what, err.Error())
	}
	return r, diags
}

// renderedClusters is every cluster the record's rendered holds an object
// for; the objects are not decoded.
func (r manifestRecord) renderedClusters() []string {
	elems, _ := rawMap(r.rendered)
	return sortedKeys(elems)
}

// dependencyClusters is where the record says each dependency runs, by
// the dependency's identity.
func (r manifestRecord) dependencyClusters() map[string][]string {
	out := map[string][]string{}
	deps, _, _ := dependenciesFromRaw(r.dependencies)
	var rendered []tftypes.Value
	if r.dependenciesRendered.IsKnown() && !r.dependenciesRendered.IsNull() {
		_ = r.dependenciesRendered.As(&rendered)
	}
	if len(rendered) != len(deps) {
		return out
	}
	for i, dep := range deps {
		elems, _ := rawMap(rendered[i])
		out[api.TemplateRefOf(dep).String()] = sortedKeys(elems)
	}
	return out
}

// rawMap is the elements of a known map value; null and unknown read as
// none.
func rawMap(v tftypes.Value) (map[string]tftypes.Value, error) {
	if v.IsNull() || !v.IsKnown() {
		return nil, nil
	}
	var elems map[string]tftypes.Value
	err := v.As(&elems)
	return elems, err
}

// rawBool reads a bool attribute; null and unknown read as false.
func rawBool(v tftypes.Value) bool {
	var b bool
	if v.IsKnown() && !v.IsNull() {
		_ = v.As(&b)
	}
	return b
}
