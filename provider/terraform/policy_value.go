package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// policyValue is one policy resource's value as its Karmada object, with
// Karmada's defaults applied and validated.
type policyValue struct {
	// Kind is the Karmada kind: api.KindPropagationPolicy,
	// api.KindClusterPropagationPolicy, api.KindOverridePolicy or
	// api.KindClusterOverridePolicy.
	Kind string
	// Namespace is empty for the cluster-wide kinds.
	Namespace string
	// Name is the policy name.
	Name string
	// Propagation is the spec of the propagation kinds, nil otherwise.
	Propagation *api.PropagationSpec
	// Override is the spec of the override kinds, nil otherwise.
	Override *api.OverrideSpec
}

// policyFromValue converts the value of one flotilla_*policy resource, as
// another resource receives it (`propagation_policies =
// [flotilla_propagation_policy.web]`, typically through a Dynamic
// attribute), into its Karmada object. The `kind` attribute says which of the
// four kinds it is. known is false, with no diagnostics, while any part of
// the value is unknown; diagnostics name attributes below at.
func policyFromValue(ctx context.Context, v attr.Value, at path.Path) (p *policyValue, known bool, diags diag.Diagnostics) {
	tv, err := v.ToTerraformValue(ctx)
	if err != nil {
		diags.AddAttributeError(at, "Invalid policy", err.Error())
		return nil, false, diags
	}
	return policyFromTerraform(tv, at)
}

// policiesFromValue converts a list, set or tuple of policy values (a Dynamic
// value may hold any of them), as policyFromValue does for each element.
// known is false while any element is unknown.
func policiesFromValue(ctx context.Context, v attr.Value, at path.Path) (ps []*policyValue, known bool, diags diag.Diagnostics) {
	tv, err := v.ToTerraformValue(ctx)
	if err != nil {
		diags.AddAttributeError(at, "Invalid policies", err.Error())
		return nil, false, diags
	}
	return policiesFromTerraform(tv, at)
}

// policiesFromTerraform is policiesFromValue for a Terraform value.
func policiesFromTerraform(tv tftypes.Value, at path.Path) (ps []*policyValue, known bool, diags diag.Diagnostics) {
	if !tv.IsKnown() {
		return nil, false, nil
	}
	if tv.IsNull() {
		return nil, true, nil
	}
	var elems []tftypes.Value
	if err := tv.As(&elems); err != nil {
		diags.AddAttributeError(at, "Invalid policies", "Expected a list of flotilla policy resources.")
		return nil, false, diags
	}
	known = true
	for i, e := range elems {
		p, ok, d := policyFromTerraform(e, at.AtListIndex(i))
		diags.Append(d...)
		known = known && ok
		if p != nil {
			ps = append(ps, p)
		}
	}
	if !known || diags.HasError() {
		return nil, known, diags
	}
	return ps, true, diags
}

// policyFromTerraform is policyFromValue for a Terraform value.
func policyFromTerraform(v tftypes.Value, at path.Path) (*policyValue, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !v.IsFullyKnown() {
		return nil, false, nil
	}
	if v.IsNull() {
		diags.AddAttributeError(at, "Invalid policy", "A policy must not be null.")
		return nil, false, diags
	}
	var attrs map[string]tftypes.Value
	err := v.As(&attrs)
	kind, ok := stringAttr(attrs, attrKind)
	if err != nil || !ok || kind == "" {
		diags.AddAttributeError(at, "Invalid policy",
			"Expected a flotilla policy resource (an object with a `kind` attribute), for example flotilla_propagation_policy.web.")
		return nil, false, diags
	}
	k, ok := policyKindOf(kind)
	if !ok {
		diags.AddAttributeError(at.AtName(attrKind), "Invalid policy",
			fmt.Sprintf("Unknown policy kind %q; expected one of PropagationPolicy, ClusterPropagationPolicy, OverridePolicy or ClusterOverridePolicy.", kind))
		return nil, false, diags
	}
	p, diags := k.decode(v, at, false)
	return p, true, diags
}

// decode converts a known object value of the kind's resource shape (a
// configuration, a plan or a state) into the Karmada object, applies Karmada's
// defaults and validates it. Problems are diagnostics on the attribute below
// at that they concern. With schemaChecked (the value is this resource's own
// configuration, which the schema validators also check), values the schema
// rejects are left to those validators, so each mistake is reported once.
// The policy is nil whenever it is invalid, even if every problem was left to
// the schema validators.
func (k policyKind) decode(v tftypes.Value, at path.Path, schemaChecked bool) (*policyValue, diag.Diagnostics) {
	var diags diag.Diagnostics
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		diags.AddAttributeError(at, "Invalid "+k.noun, err.Error())
		return nil, diags
	}
	name, ok := stringAttr(attrs, attrName)
	if !ok {
		diags.AddAttributeError(at.AtName(attrName), "Invalid "+k.noun, "The name must be a string.")
		return nil, diags
	}
	var namespace string
	if k.namespaced {
		if namespace, ok = stringAttr(attrs, attrNamespace); !ok {
			diags.AddAttributeError(at.AtName(attrNamespace), "Invalid "+k.noun, "The namespace must be a string.")
			return nil, diags
		}
	}
	conv := &specEncoder{rejected: map[string]*valueError{}}
	allowed := map[string]bool{attrName: true, attrKind: true, attrID: true, attrNamespace: k.namespaced}
	doc, err := conv.objectJSON(k.fields(), v, at, allowed)
	if err != nil {
		diags.Append(valueErrorDiagnostic(k, err))
		return nil, diags
	}
	spec, err := json.Marshal(doc)
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+k.noun, err.Error())
		return nil, diags
	}
	p, errs, err := k.validated(metav1.ObjectMeta{Name: name, Namespace: namespace}, spec)
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+k.noun, err.Error())
		return nil, diags
	}
	invalid := len(errs) > 0 || len(conv.rejected) > 0
	rejected := conv.rejected
	if !schemaChecked {
		for _, key := range sortedKeys(rejected) {
			diags.Append(valueErrorDiagnostic(k, rejected[key]))
		}
		rejected, doc = nil, nil
	}
	for _, fe := range errs {
		if d, ok := k.fieldErrorDiagnostic(fe, doc, at, rejected); ok {
			diags.Append(d)
		}
	}
	if invalid {
		return nil, diags
	}
	return p, diags
}

// stringAttr reads attribute name of an object as a string; a null string
// reads as "". ok is false when it is missing or not a string.
func stringAttr(attrs map[string]tftypes.Value, name string) (s string, ok bool) {
	v, found := attrs[name]
	if !found || !v.Type().Is(tftypes.String) {
		return "", false
	}
	if err := v.As(&s); err != nil {
		return "", false
	}
	return s, true
}

// validated decodes spec strictly into the kind's Karmada object with meta,
// applies Karmada's defaults and validates it with Karmada's rules.
func (k policyKind) validated(meta metav1.ObjectMeta, spec []byte) (*policyValue, field.ErrorList, error) {
	p := &policyValue{Kind: k.kind, Namespace: meta.Namespace, Name: meta.Name}
	var errs field.ErrorList
	switch k {
	case propagationPolicyKind:
		o := &api.PropagationPolicy{ObjectMeta: meta}
		if err := decodeStrict(spec, &o.Spec); err != nil {
			return nil, nil, err
		}
		api.DefaultPropagationPolicy(o)
		errs, p.Propagation = api.ValidatePropagationPolicy(o), &o.Spec
	case clusterPropagationPolicyKind:
		o := &api.ClusterPropagationPolicy{ObjectMeta: meta}
		if err := decodeStrict(spec, &o.Spec); err != nil {
			return nil, nil, err
		}
		api.DefaultClusterPropagationPolicy(o)
		errs, p.Propagation = api.ValidateClusterPropagationPolicy(o), &o.Spec
	case overridePolicyKind:
		o := &api.OverridePolicy{ObjectMeta: meta}
		if err := decodeStrict(spec, &o.Spec); err != nil {
			return nil, nil, err
		}
		api.DefaultOverridePolicy(o)
		errs, p.Override = api.ValidateOverridePolicy(o), &o.Spec
	case clusterOverridePolicyKind:
		o := &api.ClusterOverridePolicy{ObjectMeta: meta}
		if err := decodeStrict(spec, &o.Spec); err != nil {
			return nil, nil, err
		}
		api.DefaultClusterOverridePolicy(o)
		errs, p.Override = api.ValidateClusterOverridePolicy(o), &o.Spec
	default:
		return nil, nil, fmt.Errorf("unknown policy kind %q", k.kind)
	}
	return p, errs, nil
}

// decodeStrict decodes JSON into v, refusing unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode spec: %w", err)
	}
	return nil
}

// fieldErrorDiagnostic turns one Karmada validation error into a diagnostic
// on the attribute it concerns. ok is false when the attribute's own schema
// validators already report the value: its path is in rejected, or the
// constraint rejects its value in doc (nil doc and rejected: report all).
func (k policyKind) fieldErrorDiagnostic(fe *field.Error, doc map[string]any, at path.Path, rejected map[string]*valueError) (diag.Diagnostic, bool) {
	return specErrorDiagnostic(k.fields(), k.noun, fe, doc, at, rejected)
}

// specErrorDiagnostic is fieldErrorDiagnostic for any resource whose
// attributes are fields (the spec of a Karmada kind) and whose kind is
// called noun in messages.
func specErrorDiagnostic(fields []*specField, noun string, fe *field.Error, doc map[string]any, at path.Path, rejected map[string]*valueError) (diag.Diagnostic, bool) {
	steps := parseFieldPath(fe.Field)
	var p path.Path
	var f *specField
	complete := false
	switch {
	case len(steps) > 1 && steps[0].name == "spec":
		p, f, complete = attributePath(fields, steps[1:], at)
		if rejected[p.String()] != nil {
			return nil, false
		}
		if doc != nil && complete && f != nil && f.constraint().rejects(valueAt(doc, steps[1:])) {
			return nil, false
		}
	case len(steps) == 2 && steps[0].name == "metadata" && (steps[1].name == attrName || steps[1].name == attrNamespace):
		p, complete = at.AtName(steps[1].name), true
	default:
		p = at
	}
	detail := fe.ErrorBody()
	if !complete {
		detail += " (Karmada field " + fe.Field + ")"
	}
	summary := "Invalid " + noun
	if len(p.Steps()) == 0 {
		return diag.NewErrorDiagnostic(summary, detail), true
	}
	return diag.NewAttributeErrorDiagnostic(p, summary, p.String()+": "+detail), true
}

// valueErrorDiagnostic reports a value that could not be converted.
func valueErrorDiagnostic(k policyKind, err error) diag.Diagnostic {
	var ve *valueError
	if errors.As(err, &ve) {
		return diag.NewAttributeErrorDiagnostic(ve.path, "Invalid "+k.noun, ve.Error())
	}
	return diag.NewErrorDiagnostic("Invalid "+k.noun, err.Error())
}

// addTo appends the policy to the fleet under its kind, as the engine reads it.
func (p *policyValue) addTo(f *plan.Fleet) {
	meta := metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}
	tm := metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: p.Kind}
	switch p.Kind {
	case api.KindPropagationPolicy:
		f.PropagationPolicies = append(f.PropagationPolicies, api.PropagationPolicy{TypeMeta: tm, ObjectMeta: meta, Spec: *p.Propagation})
	case api.KindClusterPropagationPolicy:
		f.ClusterPropagationPolicies = append(f.ClusterPropagationPolicies, api.ClusterPropagationPolicy{TypeMeta: tm, ObjectMeta: meta, Spec: *p.Propagation})
	case api.KindOverridePolicy:
		f.OverridePolicies = append(f.OverridePolicies, api.OverridePolicy{TypeMeta: tm, ObjectMeta: meta, Spec: *p.Override})
	case api.KindClusterOverridePolicy:
		f.ClusterOverridePolicies = append(f.ClusterOverridePolicies, api.ClusterOverridePolicy{TypeMeta: tm, ObjectMeta: meta, Spec: *p.Override})
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
