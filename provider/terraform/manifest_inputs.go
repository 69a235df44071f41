package terraform

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// manifestInputs is flotilla_manifest's configuration as engine input.
type manifestInputs struct {
	template *unstructured.Unstructured
	// dependencies are the dependencies attribute's objects, in order.
	dependencies []*unstructured.Unstructured
	fleet        engine.Fleet
	// known is false when the placement depends on a value Terraform does
	// not know yet: the template, a policy or a cluster's facts. Unknown
	// connections alone do not count: such clusters are planned from their
	// declared facts.
	known bool
	// customizations are resource_interpreters as Karmada objects, which
	// apply records in private state for the refreshes that follow (the
	// attribute is write-only); fleet.Interpreter runs them.
	customizations []api.ResourceInterpreterCustomization
	// scopeOpen is true when the template's kind is neither built in nor
	// declared by a CustomResourceDefinition in dependencies, and no
	// recorded id settles its namespace: decideScope asks the members.
	scopeOpen bool
}

// expandRaw turns the raw attributes of flotilla_manifest into engine
// input (decodeManifest chooses which). A nil template with no error
// diagnostics means the template itself is not known yet.
// The fleet (clusters and policies) is decoded once per distinct value
// in the provider process: a configuration of a hundred manifests passes
// the same clusters to each.
func expandRaw(attrs map[string]tftypes.Value) (manifestInputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	in := manifestInputs{known: true}
	tmpl, known, d := templateFromRaw(attrs[attrManifest])
	diags.Append(d...)
	in.template, in.known = tmpl, known
	deps, known, d := dependenciesFromRaw(attrs[attrDependencies])
	diags.Append(d...)
	in.dependencies = deps
	in.known = in.known && known
	diags.Append(settleScopes(&in, rawString(attrs[attrID]))...)

	members, known, d := fleetDecoder.members(attrs[attrClusters])
	diags.Append(d...)
	in.fleet.Members = members
	in.known = in.known && known
	// Plans show what will really start: the members' nodes hold the
	// replicas, not their summed free resources (manifest_facts.go says
	// how a plan from recorded status still estimates node by node).
	in.fleet.PerNode = true

	var pf plan.Fleet
	for _, field := range []struct {
		name  string
		kinds []string
	}{
		{attrPropagationPolicies, []string{api.KindPropagationPolicy, api.KindClusterPropagationPolicy}},
		{attrOverridePolicies, []string{api.KindOverridePolicy, api.KindClusterOverridePolicy}},
	} {
		value := attrs[field.name]
		if value.IsNull() {
			continue
		}
		policies, known, d := fleetDecoder.policies(value, field.name)
		diags.Append(d...)
		in.known = in.known && known
		for i, p := range policies {
			if p.Kind != field.kinds[0] && p.Kind != field.kinds[1] {
				diags.AddAttributeError(path.Root(field.name).AtListIndex(i), "Wrong kind of policy",
					fmt.Sprintf("%s takes %s and %s resources; element %d is a %s (%s).", field.name, field.kinds[0], field.kinds[1], i, p.Kind, p.Name))
				continue
			}
			p.addTo(&pf)
		}
	}
	in.fleet.PropagationPolicies = pf.PropagationPolicies
	in.fleet.ClusterPropagationPolicies = pf.ClusterPropagationPolicies
	in.fleet.OverridePolicies = pf.OverridePolicies
	in.fleet.ClusterOverridePolicies = pf.ClusterOverridePolicies
	quotas, known, d := quotasFromTerraform(attrs[attrQuotas], path.Root(attrQuotas))
	diags.Append(d...)
	in.fleet.Quotas = quotas
	in.known = in.known && known
	set, known, d := fleetDecoder.interpreters(attrs[attrResourceInterpreters])
	diags.Append(d...)
	if set != nil {
		in.fleet.Interpreter, in.customizations = set.interpreter, set.customizations
	}
	in.known = in.known && known
	return in, diags
}

// templateFromRaw decodes the manifest attribute. known is false while
// any part of it is unknown.
func templateFromRaw(v tftypes.Value) (*unstructured.Unstructured, bool, diag.Diagnostics) {
	raw, err := jsonFromTerraform(v)
	if errors.Is(err, errUnknown) {
		return nil, false, nil
	}
	var diags diag.Diagnostics
	if err != nil {
		diags.AddAttributeError(path.Root("manifest"), "Invalid manifest", err.Error())
		return nil, true, diags
	}
	tmpl, d := templateFromJSON(raw, path.Root("manifest"))
	return tmpl, true, d
}

// dependenciesFromRaw decodes the dependencies attribute: a list of
// manifests. known is false while any part of it is unknown.
func dependenciesFromRaw(v tftypes.Value) ([]*unstructured.Unstructured, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	at := path.Root("dependencies")
	if v.IsNull() {
		return nil, true, nil
	}
	raw, err := jsonFromTerraform(v)
	if errors.Is(err, errUnknown) {
		return nil, false, nil
	}
	list, ok := raw.([]any)
	if err != nil || !ok {
		diags.AddAttributeError(at, "Invalid dependencies", "Expected a list of manifests, e.g. [local.config_map, local.secret].")
		return nil, true, diags
	}
	out := make([]*unstructured.Unstructured, 0, len(list))
	for i, e := range list {
		tmpl, d := templateFromJSON(e, at.AtListIndex(i))
		diags.Append(d...)
		if tmpl != nil {
			out = append(out, tmpl)
		}
	}
	return out, true, diags
}

// settleScopes gives every namespaced object that names no namespace the
// default one, as kubectl's default context does, and refuses a namespace
// on a cluster-scoped one (kubectl would drop it silently; a namespace the
// user wrote and flotilla ignores is a surprise). The template's scope is
// decided offline (manifest_scope.go), else by the recorded id; else it
// stays open for decideScope. A dependency whose scope only discovery could
// tell is taken as namespaced, as before.
func settleScopes(in *manifestInputs, recordedID string) diag.Diagnostics {
	var diags diag.Diagnostics
	settle := func(t *unstructured.Unstructured, at path.Path, main bool) {
		cluster, decided := staticScope(t.GroupVersionKind().GroupKind(), in.dependencies)
		switch {
		case decided && cluster && t.GetNamespace() != "":
			diags.AddAttributeError(at.AtName("metadata").AtName("namespace"), "Namespace on a cluster-scoped object",
				fmt.Sprintf("%s is cluster-scoped, so %s cannot have metadata.namespace %q; remove it.", t.GroupVersionKind().GroupKind(), objectName(t), t.GetNamespace()))
		case decided && cluster:
		case main && !decided:
			in.scopeOpen = !scopeFromID(t, recordedID)
		case t.GetNamespace() == "":
			t.SetNamespace(api.DefaultNamespace)
		}
	}
	if in.template != nil {
		settle(in.template, path.Root(attrManifest), true)
	}
	for i, d := range in.dependencies {
		settle(d, path.Root(attrDependencies).AtListIndex(i), false)
	}
	return diags
}

// templateFromJSON checks a decoded manifest; settleScopes gives it its
// namespace.
func templateFromJSON(raw any, at path.Path) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, ok := raw.(map[string]any)
	if !ok {
		diags.AddAttributeError(at, "Invalid manifest", "The manifest must be an object with apiVersion, kind and metadata.")
		return nil, diags
	}
	tmpl := &unstructured.Unstructured{Object: obj}
	for _, f := range []struct{ field, value string }{{"apiVersion", tmpl.GetAPIVersion()}, {"kind", tmpl.GetKind()}, {"metadata.name", tmpl.GetName()}} {
		if f.value == "" {
			diags.AddAttributeError(at, "Invalid manifest", fmt.Sprintf("The manifest has no %s.", f.field))
		}
	}
	if diags.HasError() {
		return nil, diags
	}
	for _, fe := range api.ValidateTemplateMeta(tmpl) {
		diags.AddAttributeError(at, "Invalid manifest", fe.Error())
	}
	if diags.HasError() {
		return nil, diags
	}
	return tmpl, diags
}

// membersFromRaw decodes the clusters attribute: a list or tuple of
// flotilla_cluster values. known is false while a cluster's facts (not its
// connection) are unknown.
func membersFromRaw(v tftypes.Value) ([]engine.Member, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	at := path.Root("clusters")
	if v.IsNull() {
		return nil, true, nil
	}
	if !v.IsKnown() {
		return nil, false, nil
	}
	var elems []tftypes.Value
	if !v.Type().Is(tftypes.List{}) && !v.Type().Is(tftypes.Tuple{}) && !v.Type().Is(tftypes.Set{}) || v.As(&elems) != nil {
		diags.AddAttributeError(at, "Invalid clusters", "Expected a list of flotilla_cluster resources, e.g. [flotilla_cluster.east, flotilla_cluster.west].")
		return nil, true, diags
	}
	known := true
	seen := map[string]int{}
	members := make([]engine.Member, 0, len(elems))
	for i, e := range elems {
		m, _, factsKnown, d := memberFromTerraform(context.Background(), e, path.Empty())
		for _, dd := range d {
			diags.AddAttributeError(at.AtListIndex(i), dd.Summary(), dd.Detail())
		}
		if !factsKnown {
			known = false
			continue
		}
		if j, dup := seen[m.Cluster.Name]; dup {
			diags.AddAttributeError(at.AtListIndex(i), "Duplicate cluster",
				fmt.Sprintf("Cluster %q is listed twice (elements %d and %d).", m.Cluster.Name, j, i))
			continue
		}
		seen[m.Cluster.Name] = i
		members = append(members, m)
	}
	return members, known, diags
}

// parsePolicyRef reads the policy attribute (plan.PolicyRef's String:
// "PropagationPolicy <namespace>/<name>" or "ClusterPropagationPolicy
// <name>"); ok is false for anything else, which only makes the claim
// not sticky.
func parsePolicyRef(s string) (ref policy.ClaimRef, ok bool) {
	kind, rest, found := strings.Cut(s, " ")
	if !found || rest == "" {
		return policy.ClaimRef{}, false
	}
	switch kind {
	case api.KindClusterPropagationPolicy:
		return policy.ClaimRef{Kind: kind, Name: rest}, !strings.Contains(rest, "/")
	case api.KindPropagationPolicy:
		_, name, found := strings.Cut(rest, "/")
		return policy.ClaimRef{Kind: kind, Name: name}, found && name != ""
	}
	return policy.ClaimRef{}, false
}

// placementCounts is a plan result's placement: cluster → replicas.
func placementCounts(r plan.Result) map[string]int64 {
	out := make(map[string]int64, len(r.Placement))
	for _, tc := range r.Placement {
		out[tc.Name] = int64(tc.Replicas)
	}
	return out
}

// flattenPlacement is the placement attribute of a plan result.
func flattenPlacement(r plan.Result) types.Map {
	elems := make(map[string]attr.Value, len(r.Placement))
	for name, n := range placementCounts(r) {
		elems[name] = types.Int64Value(n)
	}
	return types.MapValueMust(types.Int64Type, elems)
}

// renderedJSON is the placement data source's rendered attribute as JSON:
// an object keyed by cluster, a sensitive kind's data shown as
// sensitiveShown (a data source has no private state to keep a key in).
func renderedJSON(works map[string]render.Work, sensitive sensitiveKinds) map[string]any {
	obj := make(map[string]any, len(works))
	for cluster, w := range works {
		obj[cluster] = sensitive.redact(w.Object.Object, nil)
	}
	return obj
}

// flattenRendered is the placement data source's rendered attribute: an
// object keyed by cluster.
func flattenRendered(works map[string]render.Work, sensitive sensitiveKinds) (types.Dynamic, error) {
	v, err := valueFromJSON(renderedJSON(works, sensitive))
	if err != nil {
		return types.DynamicNull(), err
	}
	return types.DynamicValue(v), nil
}

// templateFromImportID accepts the identity flotilla_manifest's id shows:
// "<group>/<version>, Kind=<kind>, <namespace>/<name>".
func templateFromImportID(id string) (*unstructured.Unstructured, error) {
	ref, err := api.ParseTemplateRef(id)
	if err != nil {
		return nil, fmt.Errorf("%w; want the id flotilla_manifest shows, e.g. \"apps/v1, Kind=Deployment, default/web\"", err)
	}
	tmpl := &unstructured.Unstructured{Object: map[string]any{}}
	apiVersion := ref.Version
	if ref.Group != "" {
		apiVersion = ref.Group + "/" + ref.Version
	}
	tmpl.SetAPIVersion(apiVersion)
	tmpl.SetKind(ref.Kind)
	tmpl.SetNamespace(ref.Namespace)
	tmpl.SetName(ref.Name)
	return tmpl, nil
}

func sortedStrings(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
