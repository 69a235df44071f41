package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultNamespace is the namespace given to namespaced Karmada objects that
// name none, as kubectl does with a default context.
const DefaultNamespace = "default"

// DocumentError is what is wrong with one YAML document. Error() reads
// "file:doc: Kind namespace/name: path: problem; path: problem".
// +kubebuilder:object:generate=false
type DocumentError struct {
	// Source is the file (or other origin) the document came from.
	Source string
	// Document is the 1-based index of the document in Source; an item of a
	// v1 List is reported as "doc.items[i]" through Item.
	Document int
	// Item is the index of the v1 List item, or -1 when the document is not a list.
	Item int
	// Object is "Kind namespace/name" (or "Kind name"), empty if unknown.
	Object string
	// Fields are the problems tied to a field path.
	Fields field.ErrorList
	// Err is a problem not tied to a field (bad YAML, for instance).
	Err error
}

// Location is "source:document", with "[item]" for a List item.
func (e *DocumentError) Location() string {
	loc := fmt.Sprintf("%s:%d", e.Source, e.Document)
	if e.Item >= 0 {
		loc += fmt.Sprintf(".items[%d]", e.Item)
	}
	return loc
}

// Error implements error.
func (e *DocumentError) Error() string {
	var b strings.Builder
	b.WriteString(e.Location())
	if e.Object != "" {
		b.WriteString(": ")
		b.WriteString(e.Object)
	}
	b.WriteString(": ")
	var parts []string
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	for _, fe := range e.Fields {
		parts = append(parts, fe.Error())
	}
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

// Unwrap returns the underlying non-field error, if any.
func (e *DocumentError) Unwrap() error {
	return e.Err
}

// header is the part of every object Decode looks at first.
// +kubebuilder:object:generate=false
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// Decode reads multi-document YAML from one source (a file name, used only
// in errors). Karmada kinds (recognised by API group) are decoded strictly:
// unknown fields, duplicate fields and values of the wrong type are errors.
// They are then defaulted and validated as Karmada's webhooks would. Any
// other object is a resource template and needs apiVersion, kind and
// metadata.name. Empty documents are skipped, and the items of a v1 List
// are decoded as if they were documents.
//
// All problems are reported, each as a *DocumentError, joined with
// errors.Join; the Bundle is nil when there is any.
func Decode(source string, data []byte) (*Bundle, error) {
	b := &Bundle{Origins: map[string]string{}}
	var errs []error
	for i, chunk := range splitDocuments(data) {
		errs = append(errs, b.decodeDocument(source, i+1, chunk)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// decodeDocument decodes one YAML document into b.
func (b *Bundle) decodeDocument(source string, doc int, chunk []byte) []error {
	loc := &DocumentError{Source: source, Document: doc, Item: -1}
	data, err := yaml.YAMLToJSONStrict(chunk)
	if err != nil {
		loc.Err = fmt.Errorf("parse yaml: %w", err)
		return []error{loc}
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return nil
	}
	if data[0] != '{' {
		loc.Err = errors.New("document is not an object")
		return []error{loc}
	}
	var h header
	if err := json.Unmarshal(data, &h); err != nil {
		loc.Err = fmt.Errorf("read apiVersion, kind and metadata: %w", err)
		return []error{loc}
	}
	if h.APIVersion == "v1" && h.Kind == "List" {
		var errs []error
		for i, item := range h.Items {
			item = bytes.TrimSpace(item)
			if len(item) == 0 || item[0] != '{' {
				errs = append(errs, &DocumentError{Source: source, Document: doc, Item: i, Err: errors.New("list item is not an object")})
				continue
			}
			var ih header
			if err := json.Unmarshal(item, &ih); err != nil {
				errs = append(errs, &DocumentError{Source: source, Document: doc, Item: i, Err: fmt.Errorf("read apiVersion, kind and metadata: %w", err)})
				continue
			}
			if e := b.decodeObject(&DocumentError{Source: source, Document: doc, Item: i}, ih, item); e != nil {
				errs = append(errs, e)
			}
		}
		return errs
	}
	if e := b.decodeObject(loc, h, data); e != nil {
		return []error{e}
	}
	return nil
}

// decodeObject decodes one JSON object into b; it returns loc, filled in,
// when the object is bad.
func (b *Bundle) decodeObject(loc *DocumentError, h header, data []byte) *DocumentError {
	loc.Object = describe(h.Kind, h.Metadata.Namespace, h.Metadata.Name)
	var missing field.ErrorList
	if h.APIVersion == "" {
		missing = append(missing, field.Required(field.NewPath("apiVersion"), ""))
	}
	if h.Kind == "" {
		missing = append(missing, field.Required(field.NewPath("kind"), ""))
	}
	if h.Metadata.Name == "" {
		missing = append(missing, field.Required(field.NewPath("metadata", "name"), ""))
	}
	if len(missing) > 0 {
		loc.Fields = missing
		return loc
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		loc.Fields = field.ErrorList{field.Invalid(field.NewPath("apiVersion"), h.APIVersion, err.Error())}
		return loc
	}
	switch gv.Group {
	case ClusterGroup, PolicyGroup, WorkGroup, ConfigGroup:
		return b.decodeKarmada(loc, gv, h, data)
	}
	tmpl := &unstructured.Unstructured{}
	if err := tmpl.UnmarshalJSON(data); err != nil {
		loc.Err = fmt.Errorf("decode template: %w", err)
		return loc
	}
	if errs := ValidateTemplateMeta(tmpl); len(errs) > 0 {
		loc.Fields = errs
		return loc
	}
	return b.add(loc, tmpl.GetAPIVersion(), tmpl.GetKind(), tmpl.GetNamespace(), tmpl.GetName(), func() {
		b.Templates = append(b.Templates, tmpl)
	})
}

// karmadaKind says how to decode, default, validate and store one Karmada kind.
// +kubebuilder:object:generate=false
type karmadaKind struct {
	version    schema.GroupVersion
	namespaced bool
	// decode strictly decodes data, defaults and validates it, and returns
	// the function that stores it in a Bundle.
	decode func(data []byte) (store func(*Bundle), errs field.ErrorList, err error)
}

// kindDecoder builds a karmadaKind decode function for type T.
func kindDecoder[T any](prepare func(*T), validate func(*T) field.ErrorList, store func(*Bundle, *T)) func([]byte) (func(*Bundle), field.ErrorList, error) {
	return func(data []byte) (func(*Bundle), field.ErrorList, error) {
		obj := new(T)
		errs, err := strictDecode(data, obj)
		if err != nil || len(errs) > 0 {
			return nil, errs, err
		}
		prepare(obj)
		if errs := validate(obj); len(errs) > 0 {
			return nil, errs, nil
		}
		return func(b *Bundle) { store(b, obj) }, nil, nil
	}
}

// karmadaKinds is a function rather than a package variable so the package
// keeps no global state.
func karmadaKinds(kind string) (karmadaKind, bool) {
	switch kind {
	case KindCluster:
		return karmadaKind{ClusterGroupVersion, false, kindDecoder(func(*Cluster) {}, ValidateCluster,
			func(b *Bundle, o *Cluster) { b.Clusters = append(b.Clusters, *o) })}, true
	case KindPropagationPolicy:
		return karmadaKind{PolicyGroupVersion, true, kindDecoder(func(o *PropagationPolicy) {
			defaultNamespace(&o.Namespace)
			DefaultPropagationPolicy(o)
		}, ValidatePropagationPolicy,
			func(b *Bundle, o *PropagationPolicy) { b.PropagationPolicies = append(b.PropagationPolicies, *o) })}, true
	case KindClusterPropagationPolicy:
		return karmadaKind{PolicyGroupVersion, false, kindDecoder(DefaultClusterPropagationPolicy, ValidateClusterPropagationPolicy,
			func(b *Bundle, o *ClusterPropagationPolicy) {
				b.ClusterPropagationPolicies = append(b.ClusterPropagationPolicies, *o)
			})}, true
	case KindOverridePolicy:
		return karmadaKind{PolicyGroupVersion, true, kindDecoder(func(o *OverridePolicy) {
			defaultNamespace(&o.Namespace)
			DefaultOverridePolicy(o)
		}, ValidateOverridePolicy,
			func(b *Bundle, o *OverridePolicy) { b.OverridePolicies = append(b.OverridePolicies, *o) })}, true
	case KindClusterOverridePolicy:
		return karmadaKind{PolicyGroupVersion, false, kindDecoder(DefaultClusterOverridePolicy, ValidateClusterOverridePolicy,
			func(b *Bundle, o *ClusterOverridePolicy) {
				b.ClusterOverridePolicies = append(b.ClusterOverridePolicies, *o)
			})}, true
	case KindFederatedResourceQuota:
		return karmadaKind{PolicyGroupVersion, true, kindDecoder(func(o *FederatedResourceQuota) { defaultNamespace(&o.Namespace) }, ValidateFederatedResourceQuota,
			func(b *Bundle, o *FederatedResourceQuota) { b.Quotas = append(b.Quotas, *o) })}, true
	case KindResourceBinding:
		return karmadaKind{BindingGroupVersion, true, kindDecoder(func(o *ResourceBinding) {
			defaultNamespace(&o.Namespace)
			DefaultResourceBinding(o)
		}, ValidateResourceBinding,
			func(b *Bundle, o *ResourceBinding) { b.Bindings = append(b.Bindings, *o) })}, true
	case KindResourceInterpreterCustomization:
		return karmadaKind{ConfigGroupVersion, false, kindDecoder(func(*ResourceInterpreterCustomization) {}, ValidateResourceInterpreterCustomization,
			func(b *Bundle, o *ResourceInterpreterCustomization) { b.Interpreters = append(b.Interpreters, *o) })}, true
	}
	return karmadaKind{}, false
}

// decodeKarmada decodes a Karmada object strictly, defaults and validates it.
func (b *Bundle) decodeKarmada(loc *DocumentError, gv schema.GroupVersion, h header, data []byte) *DocumentError {
	k, ok := karmadaKinds(h.Kind)
	if !ok || k.version.Group != gv.Group {
		loc.Fields = field.ErrorList{field.NotSupported(field.NewPath("kind"), h.Kind, supportedKinds(gv.Group))}
		return loc
	}
	if gv != k.version {
		loc.Fields = field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), h.APIVersion, []string{k.version.String()})}
		return loc
	}
	ns := h.Metadata.Namespace
	if k.namespaced {
		defaultNamespace(&ns)
		loc.Object = describe(h.Kind, ns, h.Metadata.Name)
	}
	store, errs, err := k.decode(data)
	if err != nil || len(errs) > 0 {
		loc.Err, loc.Fields = err, errs
		return loc
	}
	return b.add(loc, h.APIVersion, h.Kind, ns, h.Metadata.Name, func() { store(b) })
}

// add records the object's origin, refusing a second definition.
func (b *Bundle) add(loc *DocumentError, apiVersion, kind, namespace, name string, store func()) *DocumentError {
	key := ObjectKey(apiVersion, kind, namespace, name)
	if at, dup := b.Origins[key]; dup {
		loc.Err = fmt.Errorf("already defined at %s", at)
		return loc
	}
	b.Origins[key] = loc.Location()
	store()
	return nil
}

// strictDecode decodes data into obj, reporting unknown and duplicate
// fields and wrongly typed values as field errors. err is set for problems
// without a field path (a malformed quantity, for instance).
func strictDecode(data []byte, obj any) (field.ErrorList, error) {
	strict, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		if fe, ok := locateDecodeError(data, obj); ok {
			return field.ErrorList{fe}, nil //nolint:nilerr // reported as a field error, not a failure to decode
		}
		if fe := typeError(err); fe != nil {
			return field.ErrorList{fe}, nil //nolint:nilerr // reported as a field error, not a failure to decode
		}
		return nil, fmt.Errorf("decode: %w", err)
	}
	var errs field.ErrorList
	for _, s := range strict {
		var fe sigsjson.FieldError
		if !errors.As(s, &fe) {
			errs = append(errs, field.Invalid(field.NewPath("<object>"), nil, s.Error()))
			continue
		}
		detail := "unknown field"
		if strings.HasPrefix(s.Error(), "duplicate field") {
			detail = "duplicate field"
		}
		errs = append(errs, field.Forbidden(field.NewPath(fe.FieldPath()), detail))
	}
	return errs, nil
}

// typeError turns encoding/json's "cannot unmarshal X into Go struct field
// T.path of type Y" into a field error on path; nil if err is not one.
// sigs.k8s.io/json keeps its UnmarshalTypeError internal, so the message
// is the only way to the path.
func typeError(err error) *field.Error {
	const into, ofType = " into Go struct field ", " of type "
	msg := err.Error()
	i := strings.Index(msg, into)
	j := strings.LastIndex(msg, ofType)
	if !strings.HasPrefix(msg, "json: cannot unmarshal ") || i < 0 || j < i {
		return nil
	}
	got := strings.TrimPrefix(msg[:i], "json: cannot unmarshal ")
	structAndPath := msg[i+len(into) : j]
	dot := strings.Index(structAndPath, ".")
	if dot < 0 {
		return nil
	}
	return field.TypeInvalid(field.NewPath(structAndPath[dot+1:]), got, "must be of type "+msg[j+len(ofType):])
}

// supportedKinds lists the kinds flotilla reads in a Karmada group.
func supportedKinds(group string) []string {
	switch group {
	case ClusterGroup:
		return []string{KindCluster}
	case PolicyGroup:
		return []string{KindClusterOverridePolicy, KindClusterPropagationPolicy, KindFederatedResourceQuota, KindOverridePolicy, KindPropagationPolicy}
	case ConfigGroup:
		return []string{KindResourceInterpreterCustomization}
	default:
		return []string{KindResourceBinding}
	}
}

// describe is "Kind namespace/name" or "Kind name".
func describe(kind, namespace, name string) string {
	switch {
	case name == "":
		return kind
	case namespace == "":
		return strings.TrimSpace(kind + " " + name)
	default:
		return fmt.Sprintf("%s %s/%s", kind, namespace, name)
	}
}

func defaultNamespace(ns *string) {
	if *ns == "" {
		*ns = DefaultNamespace
	}
}

// splitDocuments splits multi-document YAML at "---" lines. Unlike
// apimachinery's YAMLReader it keeps empty documents, so the index of a
// document is the number of separators before it plus one (a separator
// before any content does not count), which is what a reader counts.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	started := false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if isSeparator(line) {
			if started {
				docs = append(docs, cur)
			}
			cur, started = nil, true
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			started = true
		}
		cur = append(cur, line...)
	}
	if started || len(cur) > 0 {
		docs = append(docs, cur)
	}
	return docs
}

// isSeparator reports a "---" line, optionally followed by spaces or a comment.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// sortedKeys returns m's keys in order, so iteration is deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
