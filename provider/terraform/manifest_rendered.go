package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// rendered and dependencies_rendered hold each cluster's object as a JSON
// string (keys sorted, as encoding/json writes maps). Terraform's plan
// renders a changed JSON string as a structural diff, jsonencode({ ~ spec
// = { ~ replicas = 1 -> 2 } }), so the plan shows the same per-field
// change an object would; but a string is one value to Terraform and the
// plugin framework, where an object of ten Deployments is hundreds, each
// converted, type-checked and walked several times per manifest per
// command. Read the fields with jsondecode().

var (
	renderedType             = tftypes.Map{ElementType: tftypes.String}
	dependenciesRenderedType = tftypes.List{ElementType: renderedType}
)

// renderedValue is the rendered attribute for objects by cluster.
func renderedValue(objects map[string]map[string]any) (tftypes.Value, error) {
	elems := make(map[string]tftypes.Value, len(objects))
	for cluster, obj := range objects {
		b, err := json.Marshal(obj)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("encode the object for cluster %s: %w", cluster, err)
		}
		elems[cluster] = tftypes.NewValue(tftypes.String, string(b))
	}
	return tftypes.NewValue(renderedType, elems), nil
}

// worksObjects is each cluster's rendered object.
func worksObjects(works map[string]render.Work) map[string]map[string]any {
	out := make(map[string]map[string]any, len(works))
	for cluster, w := range works {
		out[cluster] = w.Object.Object
	}
	return out
}

// renderedListValue is dependencies_rendered for objects by cluster, one
// entry per dependency.
func renderedListValue(list []map[string]map[string]any) (tftypes.Value, error) {
	elems := make([]tftypes.Value, len(list))
	for i, objects := range list {
		v, err := renderedValue(objects)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("dependencies_rendered[%d]: %w", i, err)
		}
		elems[i] = v
	}
	return tftypes.NewValue(dependenciesRenderedType, elems), nil
}

// renderedFromRaw decodes a rendered value into objects by cluster. Null
// and unknown decode as nil.
func renderedFromRaw(v tftypes.Value, what string) (map[string]*unstructured.Unstructured, error) {
	if v.IsNull() || !v.IsKnown() {
		return nil, nil
	}
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("%s is not a map of JSON strings: %w", what, err)
	}
	out := make(map[string]*unstructured.Unstructured, len(elems))
	for cluster, e := range elems {
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(rawString(e))))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil {
			return nil, fmt.Errorf("%s[%q] is not a JSON object", what, cluster)
		}
		out[cluster] = &unstructured.Unstructured{Object: obj}
	}
	return out, nil
}

// renderedListFromRaw decodes dependencies_rendered.
func renderedListFromRaw(v tftypes.Value) ([]map[string]*unstructured.Unstructured, error) {
	if v.IsNull() || !v.IsKnown() {
		return nil, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("dependencies_rendered is not a list: %w", err)
	}
	out := make([]map[string]*unstructured.Unstructured, len(elems))
	for i, e := range elems {
		objects, err := renderedFromRaw(e, fmt.Sprintf("dependencies_rendered[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = objects
	}
	return out, nil
}
