package terraform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// A policy has no remote object to read, so import reads Karmada YAML: the
// import ID is "FILE:NAMESPACE/NAME" for the namespaced kinds and
// "FILE:NAME" for the cluster-wide ones. This is how Karmada users bring the
// policies they already have.

// importRef is a parsed import ID.
type importRef struct {
	file      string
	namespace string
	name      string
}

// parseImportID splits an import ID at its last colon, so the file path may
// itself contain colons.
func (k policyKind) parseImportID(id string) (importRef, error) {
	format := "FILE:NAME"
	if k.namespaced {
		format = "FILE:NAMESPACE/NAME"
	}
	i := strings.LastIndex(id, ":")
	if i <= 0 || i == len(id)-1 {
		return importRef{}, fmt.Errorf("the import ID must look like %s, for example policies.yaml:%s; got %q", format, k.id("default", "web"), id)
	}
	ref := importRef{file: id[:i], name: id[i+1:]}
	if k.namespaced {
		ns, name, ok := strings.Cut(ref.name, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return importRef{}, fmt.Errorf("the import ID must look like %s, with the namespace; got %q", format, id)
		}
		ref.namespace, ref.name = ns, name
	} else if strings.Contains(ref.name, "/") {
		return importRef{}, fmt.Errorf("a %s has no namespace: the import ID must look like %s; got %q", k.kind, format, id)
	}
	return ref, nil
}

// importedPolicy is the state built from a Karmada document.
type importedPolicy struct {
	// state is the resource's state value.
	state tftypes.Value
	// ignored lists Karmada fields that were set but have no attribute,
	// each with the reason.
	ignored []string
}

// importState validates data (the content of ref.file) as Karmada YAML, finds
// the policy ref names, and converts the fields as written (without Karmada's
// defaults, so a configuration written like the YAML plans no change) into
// the resource's state.
func (k policyKind) importState(ref importRef, data []byte) (*importedPolicy, error) {
	if _, err := api.Decode(ref.file, data); err != nil {
		return nil, fmt.Errorf("not valid Karmada YAML:\n%w", err)
	}
	doc, found, err := k.findDocument(data, ref)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		msg := fmt.Sprintf("there is no %s %s", k.kind, k.id(ref.namespace, ref.name))
		if len(found) > 0 {
			msg += fmt.Sprintf("; the file has %s %s", k.kind, strings.Join(found, ", "))
		}
		return nil, errors.New(msg)
	}
	spec, _ := doc["spec"].(map[string]any)
	state, dropped, err := k.stateValue(ref.namespace, ref.name, spec)
	if err != nil {
		return nil, err
	}
	out := &importedPolicy{state: state}
	for _, p := range sortedKeys(dropped) {
		skip, known := skippedFieldAt(strings.TrimPrefix(p, "spec."), k.specTypeName())
		switch {
		case !known:
			out.ignored = append(out.ignored, p+": not supported")
		case !isZeroJSON(dropped[p]) && (skip.harmless == "" || dropped[p] != skip.harmless):
			out.ignored = append(out.ignored, p+": "+skip.reason)
		}
	}
	return out, nil
}

// isZeroJSON reports a JSON value that sets nothing: null, false, 0, "" or
// an empty list or object.
func isZeroJSON(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case string:
		return t == ""
	case json.Number:
		return t.String() == "0"
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// stateValue builds the resource's value for the policy namespace/name with
// spec, a Karmada spec as JSON (numbers as json.Number). dropped holds the
// fields of spec that have no attribute, by Karmada path, with their values.
func (k policyKind) stateValue(namespace, name string, spec map[string]any) (state tftypes.Value, dropped map[string]any, err error) {
	conv := &specDecoder{dropped: map[string]any{}}
	attrs, err := conv.objectValue(k.fields(), spec, "spec")
	if err != nil {
		return tftypes.Value{}, nil, err
	}
	attrs[attrName] = tftypes.NewValue(tftypes.String, name)
	if k.namespaced {
		attrs[attrNamespace] = tftypes.NewValue(tftypes.String, namespace)
	}
	attrs[attrKind] = tftypes.NewValue(tftypes.String, k.kind)
	attrs[attrID] = tftypes.NewValue(tftypes.String, k.id(namespace, name))
	return tftypes.NewValue(k.objectType(), attrs), conv.dropped, nil
}

// findDocument returns the document of the policy ref names, as written, and
// the policies of the kind the data holds otherwise (for the message when it
// is missing). Items of a v1 List count as documents.
func (k policyKind) findDocument(data []byte, ref importRef) (doc map[string]any, found []string, err error) {
	objs, err := yamlObjects(data)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		namespace, name, ok := k.identify(o)
		if !ok {
			continue
		}
		if namespace == ref.namespace && name == ref.name {
			return o, nil, nil
		}
		found = append(found, k.id(namespace, name))
	}
	return nil, found, nil
}

// yamlObjects reads the objects of YAML documents as written (numbers as
// json.Number), with the items of each v1 List in its place; documents
// that are not objects are skipped.
func yamlObjects(data []byte) ([]map[string]any, error) {
	var out []map[string]any
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read yaml: %w", err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("read yaml: %w", err)
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil {
			continue
		}
		if obj["apiVersion"] != "v1" || obj["kind"] != "List" {
			out = append(out, obj)
			continue
		}
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
}

// identify returns the namespace and name of o when it is a policy of the
// kind; a namespaced policy without a namespace is in "default", as with
// api.Decode.
func (k policyKind) identify(o map[string]any) (namespace, name string, ok bool) {
	apiVersion, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != api.PolicyGroup || kind != k.kind {
		return "", "", false
	}
	meta, _ := o["metadata"].(map[string]any)
	name, _ = meta["name"].(string)
	if k.namespaced {
		namespace, _ = meta["namespace"].(string)
		if namespace == "" {
			namespace = api.DefaultNamespace
		}
	}
	return namespace, name, true
}

// objectType is the Terraform type of the whole resource.
func (k policyKind) objectType() tftypes.Object {
	t := specObjectType(k.fields())
	t.AttributeTypes[attrName] = tftypes.String
	t.AttributeTypes[attrKind] = tftypes.String
	t.AttributeTypes[attrID] = tftypes.String
	if k.namespaced {
		t.AttributeTypes[attrNamespace] = tftypes.String
	}
	return t
}
