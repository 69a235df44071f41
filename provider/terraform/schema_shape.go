package terraform

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The policy resources' attributes are not written by hand: they are derived
// by reflection from the Karmada types in controlplane/api (api.PropagationSpec,
// api.OverrideSpec), through their JSON tags. One tree of specFields drives
// everything that has to agree with those types: the schema, the conversion
// between Terraform values and Karmada JSON, and the mapping of Karmada field
// paths to attribute paths. Descriptions, constraints and skipped fields are
// keyed by "GoType.jsonName" (see schema_fields.go), so a type used in six
// places (ClusterAffinity, LabelSelector) is described once.

// fieldKind is how one API field is represented in Terraform.
type fieldKind int

const (
	fieldString      fieldKind = iota // string and string enums
	fieldJSONText                     // apiextensionsv1.JSON, a string holding JSON
	fieldBool                         // bool, *bool
	fieldInt                          // any integer, as Int64
	fieldStringList                   // []string
	fieldStringMap                    // map[string]string
	fieldQuantityMap                  // corev1.ResourceList: resource name → quantity, as strings
	fieldObject                       // struct, *struct: SingleNestedAttribute
	fieldObjectList                   // []struct: ListNestedAttribute
)

// specField is one API field as a Terraform attribute.
type specField struct {
	// name is the attribute name: jsonName in snake_case.
	name string
	// jsonName is the Karmada field name.
	jsonName string
	// key is "GoType.jsonName", where GoType declares the field (for an
	// inlined struct, the inlined type). It looks up the description, the
	// constraint and whether the field is skipped.
	key string
	// kind is the Terraform representation.
	kind fieldKind
	// goKind is the Go kind of an integer field, which bounds its range.
	goKind reflect.Kind
	// required is true for fields Karmada requires (a JSON tag without omitempty).
	required bool
	// fields are the attributes of an object, or of a list's objects.
	fields []*specField
}

var (
	jsonValueType = reflect.TypeFor[apiextensionsv1.JSON]()
	metaTimeType  = reflect.TypeFor[metav1.Time]()
	quantityType  = reflect.TypeFor[resource.Quantity]()
)

// errSkipType marks a field whose type has no Terraform form (metav1.Time).
var errSkipType = errors.New("type is skipped")

// specFields derives the attributes of struct type t.
func specFields(t reflect.Type) ([]*specField, error) {
	return structFields(t, map[reflect.Type]bool{})
}

func structFields(t reflect.Type, visiting map[reflect.Type]bool) ([]*specField, error) {
	if visiting[t] {
		return nil, fmt.Errorf("%s is recursive", t)
	}
	visiting[t] = true
	defer delete(visiting, t)

	var out []*specField
	for i := range t.NumField() {
		sf := t.Field(i)
		// encoding/json promotes the fields of an embedded struct even when
		// its type is unexported.
		embedded := sf.Anonymous && derefType(sf.Type).Kind() == reflect.Struct
		if !sf.IsExported() && !embedded {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && embedded {
			inner, err := structFields(derefType(sf.Type), visiting)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("%s.%s has no JSON name", t.Name(), sf.Name)
		}
		f := &specField{
			name:     snakeCase(name),
			jsonName: name,
			key:      t.Name() + "." + name,
			required: !hasTagOption(opts, "omitempty"),
		}
		if _, skip := skippedFields[f.key]; skip {
			continue
		}
		err := f.setType(sf.Type, visiting)
		if errors.Is(err, errSkipType) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		out = append(out, f)
	}
	seen := map[string]string{}
	for _, f := range out {
		if other, dup := seen[f.name]; dup {
			return nil, fmt.Errorf("%s and %s are both attribute %q", other, f.key, f.name)
		}
		seen[f.name] = f.key
	}
	return out, nil
}

// setType picks the Terraform representation of Go type t.
func (f *specField) setType(t reflect.Type, visiting map[reflect.Type]bool) error {
	t = derefType(t)
	switch t {
	case jsonValueType:
		f.kind = fieldJSONText
		return nil
	case metaTimeType:
		return errSkipType
	}
	switch t.Kind() {
	case reflect.String:
		f.kind = fieldString
	case reflect.Bool:
		f.kind = fieldBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32:
		f.kind, f.goKind = fieldInt, t.Kind()
	case reflect.Slice:
		elem := derefType(t.Elem())
		switch {
		case elem.Kind() == reflect.String:
			f.kind = fieldStringList
		case elem.Kind() == reflect.Struct && elem != jsonValueType && elem != metaTimeType:
			f.kind = fieldObjectList
			fields, err := structFields(elem, visiting)
			if err != nil {
				return err
			}
			f.fields = fields
		default:
			return fmt.Errorf("unsupported list of %s", elem)
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem() == quantityType {
			// A ResourceList: each value a quantity string ("500m", "2Gi"),
			// checked by the schema before Karmada's validation runs.
			f.kind = fieldQuantityMap
			return nil
		}
		if t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported map %s", t)
		}
		f.kind = fieldStringMap
	case reflect.Struct:
		f.kind = fieldObject
		fields, err := structFields(t, visiting)
		if err != nil {
			return err
		}
		f.fields = fields
	default:
		return fmt.Errorf("unsupported type %s", t)
	}
	return nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func hasTagOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// snakeCase turns a camelCase JSON name into a Terraform attribute name:
// "apiVersion" is "api_version", "clusterIP" is "cluster_ip" and
// "HTTPServer" is "http_server".
func snakeCase(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]))
			acronymEnd := i > 0 && unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || acronymEnd {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// findSpecField returns the field of fields with Terraform name name, or nil.
func findSpecField(fields []*specField, name string) *specField {
	for _, f := range fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

// findSpecJSONField returns the field of fields with Karmada name name, or nil.
func findSpecJSONField(fields []*specField, name string) *specField {
	for _, f := range fields {
		if f.jsonName == name {
			return f
		}
	}
	return nil
}

// constraint is the field's per-attribute constraint: the one from
// fieldConstraints, narrowed by the range of its Go integer type.
func (f *specField) constraint() attrConstraint {
	c := fieldConstraints[f.key]
	if f.kind == fieldInt {
		lo, hi := intRange(f.goKind)
		if lo > math.MinInt64 && (c.min == nil || *c.min < lo) {
			c.min = &lo
		}
		if hi < math.MaxInt64 && (c.max == nil || *c.max > hi) {
			c.max = &hi
		}
	}
	if f.kind == fieldJSONText {
		c.json = true
	}
	if f.kind == fieldQuantityMap {
		c.quantity = true
	}
	return c
}

// intRange is the range of a Go integer kind.
func intRange(k reflect.Kind) (lo, hi int64) {
	switch k {
	case reflect.Int8:
		return math.MinInt8, math.MaxInt8
	case reflect.Int16:
		return math.MinInt16, math.MaxInt16
	case reflect.Int32:
		return math.MinInt32, math.MaxInt32
	case reflect.Uint8:
		return 0, math.MaxUint8
	case reflect.Uint16:
		return 0, math.MaxUint16
	case reflect.Uint32:
		return 0, math.MaxUint32
	default:
		return math.MinInt64, math.MaxInt64
	}
}

// specAttributes renders fields as resource schema attributes.
func specAttributes(fields []*specField) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(fields))
	for _, f := range fields {
		out[f.name] = f.attribute()
	}
	return out
}

// attribute renders f as a resource schema attribute.
func (f *specField) attribute() schema.Attribute {
	desc := fieldDescriptions[f.key]
	opt := !f.required
	c := f.constraint()
	switch f.kind {
	case fieldString, fieldJSONText:
		return schema.StringAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt, Validators: c.stringValidators()}
	case fieldBool:
		return schema.BoolAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt}
	case fieldInt:
		return schema.Int64Attribute{MarkdownDescription: desc, Required: f.required, Optional: opt, Validators: c.int64Validators()}
	case fieldStringList:
		return schema.ListAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt, ElementType: types.StringType, Validators: c.listValidators()}
	case fieldStringMap:
		return schema.MapAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt, ElementType: types.StringType}
	case fieldQuantityMap:
		return schema.MapAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt, ElementType: types.StringType, Validators: c.mapValidators()}
	case fieldObject:
		return schema.SingleNestedAttribute{MarkdownDescription: desc, Required: f.required, Optional: opt, Attributes: specAttributes(f.fields),
			CustomType: specObjectAttrType(f.fields)}
	case fieldObjectList:
		object := specObjectAttrType(f.fields)
		return schema.ListNestedAttribute{
			MarkdownDescription: desc, Required: f.required, Optional: opt,
			NestedObject: schema.NestedAttributeObject{Attributes: specAttributes(f.fields), CustomType: object},
			CustomType:   types.ListType{ElemType: object},
			Validators:   c.listValidators(),
		}
	}
	panic(fmt.Sprintf("field %s has no kind", f.key))
}

// Nested attributes carry their type, computed once, as CustomType. The
// types are the framework's own object and list types, so values are
// unchanged; without them the framework rebuilds a nested attribute's type
// from its whole subtree each time it looks up a path in a value, which is
// for every element of every policy in every call and was about a seventh
// of the provider's time in a 10-member, 100-app plan.

// attrType is the framework type of f's values, as tfType.
func (f *specField) attrType() attr.Type {
	switch f.kind {
	case fieldString, fieldJSONText:
		return types.StringType
	case fieldBool:
		return types.BoolType
	case fieldInt:
		return types.Int64Type
	case fieldStringList:
		return types.ListType{ElemType: types.StringType}
	case fieldStringMap, fieldQuantityMap:
		return types.MapType{ElemType: types.StringType}
	case fieldObject:
		return specObjectAttrType(f.fields)
	case fieldObjectList:
		return types.ListType{ElemType: specObjectAttrType(f.fields)}
	}
	panic(fmt.Sprintf("field %s has no kind", f.key))
}

// specObjectAttrType is the framework object type with fields as attributes.
func specObjectAttrType(fields []*specField) types.ObjectType {
	attrs := make(map[string]attr.Type, len(fields))
	for _, f := range fields {
		attrs[f.name] = f.attrType()
	}
	return types.ObjectType{AttrTypes: attrs}
}

// tfType is the Terraform type of f's values; it equals what the framework
// derives from f.attribute(), which a test checks.
func (f *specField) tfType() tftypes.Type {
	return f.attrType().TerraformType(context.Background())
}

// specObjectType is the Terraform object type with fields as attributes.
func specObjectType(fields []*specField) tftypes.Object {
	return specObjectAttrType(fields).TerraformType(context.Background()).(tftypes.Object)
}
