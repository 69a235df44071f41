package terraform

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// interpreterNoun names the resource in diagnostics.
const interpreterNoun = "resource interpreter customization"

// decodeInterpreter converts a known value of flotilla_resource_interpreter
// (its configuration, plan or state, or an element of a manifest's
// resource_interpreters) into the Karmada object and checks it as Karmada's
// webhook does, compiling every script in flotilla's sandbox. Problems are
// diagnostics on the attribute below at that they concern; the result is nil
// whenever there is one.
func decodeInterpreter(v tftypes.Value, at path.Path) (*api.ResourceInterpreterCustomization, diag.Diagnostics) {
	var diags diag.Diagnostics
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		diags.AddAttributeError(at, "Invalid "+interpreterNoun, err.Error())
		return nil, diags
	}
	name, ok := stringAttr(attrs, attrName)
	if !ok || name == "" {
		diags.AddAttributeError(at.AtName(attrName), "Invalid "+interpreterNoun, "The name must be a non-empty string.")
		return nil, diags
	}
	conv := &specEncoder{rejected: map[string]*valueError{}}
	doc, err := conv.objectJSON(interpreterFields(), v, at, map[string]bool{attrName: true, attrKind: true, attrID: true})
	if err == nil {
		for _, key := range sortedKeys(conv.rejected) {
			err = conv.rejected[key]
			break
		}
	}
	if err != nil {
		var ve *valueError
		if errors.As(err, &ve) {
			diags.AddAttributeError(ve.path, "Invalid "+interpreterNoun, ve.Error())
		} else {
			diags.AddAttributeError(at, "Invalid "+interpreterNoun, err.Error())
		}
		return nil, diags
	}
	spec, err := json.Marshal(doc)
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+interpreterNoun, err.Error())
		return nil, diags
	}
	ric := &api.ResourceInterpreterCustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.ConfigGroup + "/v1alpha1", Kind: api.KindResourceInterpreterCustomization},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	if err := decodeStrict(spec, &ric.Spec); err != nil {
		diags.AddAttributeError(at, "Invalid "+interpreterNoun, err.Error())
		return nil, diags
	}
	for _, fe := range interpret.Validate(ric) {
		steps := parseFieldPath(fe.Field)
		p := at
		if len(steps) > 1 && steps[0].name == "spec" {
			p, _, _ = attributePath(interpreterFields(), steps[1:], at)
		}
		body := fe.ErrorBody()
		if fe.BadValue == "(script)" {
			// interpret.Validate's script errors name the operation and line.
			body = fe.Detail
		}
		detail := fmt.Sprintf("%s %q, %s: %s", interpreterNoun, name, fe.Field, body)
		if len(p.Steps()) == 0 {
			diags.AddError("Invalid "+interpreterNoun, detail)
		} else {
			diags.AddAttributeError(p, "Invalid "+interpreterNoun, detail)
		}
	}
	if diags.HasError() {
		return nil, diags
	}
	return ric, diags
}

// interpretersFromTerraform decodes a manifest's resource_interpreters: a
// list (or tuple) of flotilla_resource_interpreter values. known is false,
// with no diagnostics, while any part of it is unknown.
func interpretersFromTerraform(v tftypes.Value, at path.Path) ([]api.ResourceInterpreterCustomization, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !v.IsKnown() {
		return nil, false, nil
	}
	if v.IsNull() {
		return nil, true, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		diags.AddAttributeError(at, "Invalid resource interpreters", "Expected a list of flotilla_resource_interpreter resources.")
		return nil, true, diags
	}
	var out []api.ResourceInterpreterCustomization
	known := true
	for i, e := range elems {
		if !e.IsFullyKnown() {
			known = false
			continue
		}
		var attrs map[string]tftypes.Value
		if e.IsNull() || e.As(&attrs) != nil {
			diags.AddAttributeError(at.AtListIndex(i), "Invalid resource interpreter",
				"Expected a flotilla_resource_interpreter resource, for example flotilla_resource_interpreter.rollout.")
			continue
		}
		if kind, _ := stringAttr(attrs, attrKind); kind != api.KindResourceInterpreterCustomization {
			diags.AddAttributeError(at.AtListIndex(i), "Invalid resource interpreter",
				fmt.Sprintf("Element %d is not a flotilla_resource_interpreter (its kind is %q).", i, kind))
			continue
		}
		ric, d := decodeInterpreter(e, at.AtListIndex(i))
		diags.Append(d...)
		if ric != nil {
			out = append(out, *ric)
		}
	}
	if !known || diags.HasError() {
		return nil, known, diags
	}
	return out, true, diags
}

// importInterpreter finds the customization name in Karmada YAML and
// converts its spec, as written, into the resource's state. ignored lists
// the fields that have no attribute.
func importInterpreter(data []byte, name string) (state tftypes.Value, ignored []string, err error) {
	objs, err := yamlObjects(data)
	if err != nil {
		return tftypes.Value{}, nil, err
	}
	var found []string
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		gv, _ := schema.ParseGroupVersion(apiVersion)
		if gv.Group != api.ConfigGroup || obj["kind"] != api.KindResourceInterpreterCustomization {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		objName, _ := meta["name"].(string)
		if objName != name {
			found = append(found, objName)
			continue
		}
		spec, _ := obj["spec"].(map[string]any)
		conv := &specDecoder{dropped: map[string]any{}}
		attrs, err := conv.objectValue(interpreterFields(), spec, "spec")
		if err != nil {
			return tftypes.Value{}, nil, err
		}
		attrs[attrName] = tftypes.NewValue(tftypes.String, name)
		attrs[attrKind] = tftypes.NewValue(tftypes.String, api.KindResourceInterpreterCustomization)
		attrs[attrID] = tftypes.NewValue(tftypes.String, name)
		for _, p := range sortedKeys(conv.dropped) {
			ignored = append(ignored, p+": not supported")
		}
		return tftypes.NewValue(interpreterObjectType(), attrs), ignored, nil
	}
	msg := "there is no ResourceInterpreterCustomization " + name
	if len(found) > 0 {
		msg += "; the file has " + strings.Join(found, ", ")
	}
	return tftypes.Value{}, nil, errors.New(msg)
}

// interpreterObjectType is the Terraform type of the whole resource.
func interpreterObjectType() tftypes.Object {
	t := specObjectType(interpreterFields())
	t.AttributeTypes[attrName] = tftypes.String
	t.AttributeTypes[attrKind] = tftypes.String
	t.AttributeTypes[attrID] = tftypes.String
	return t
}
