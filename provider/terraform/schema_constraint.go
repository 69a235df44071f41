package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/api/resource"
)

// attrConstraint is what one attribute accepts on its own. It is declared as data
// so that the same declaration yields the schema validators (which report a
// bad value on the attribute) and rejects (which lets ValidateConfig drop
// Karmada's report of the same mistake, so the user sees it once).
type attrConstraint struct {
	// oneOf lists the accepted strings (Karmada's enum).
	oneOf []string
	// minLen and maxLen bound a string's length in characters; 0 is no bound.
	minLen, maxLen int
	// min and max bound an integer; nil is no bound.
	min, max *int64
	// minItems is the fewest list elements; 0 is no bound.
	minItems int
	// json requires a string that parses as JSON.
	json bool
	// quantity requires every value of a map to parse as a Kubernetes
	// quantity (a ResourceList).
	quantity bool
}

func (c attrConstraint) stringValidators() []validator.String {
	var vs []validator.String
	if len(c.oneOf) > 0 {
		vs = append(vs, stringvalidator.OneOf(c.oneOf...))
	}
	switch {
	case c.minLen > 0 && c.maxLen > 0:
		vs = append(vs, stringvalidator.LengthBetween(c.minLen, c.maxLen))
	case c.minLen > 0:
		vs = append(vs, stringvalidator.LengthAtLeast(c.minLen))
	case c.maxLen > 0:
		vs = append(vs, stringvalidator.LengthAtMost(c.maxLen))
	}
	if c.json {
		vs = append(vs, jsonTextValidator{})
	}
	return vs
}

func (c attrConstraint) int64Validators() []validator.Int64 {
	switch {
	case c.min != nil && c.max != nil:
		return []validator.Int64{int64validator.Between(*c.min, *c.max)}
	case c.min != nil:
		return []validator.Int64{int64validator.AtLeast(*c.min)}
	case c.max != nil:
		return []validator.Int64{int64validator.AtMost(*c.max)}
	}
	return nil
}

func (c attrConstraint) listValidators() []validator.List {
	if c.minItems > 0 {
		return []validator.List{listvalidator.SizeAtLeast(c.minItems)}
	}
	return nil
}

func (c attrConstraint) mapValidators() []validator.Map {
	if c.quantity {
		return []validator.Map{mapvalidator.ValueStringsAre(quantityValidator{})}
	}
	return nil
}

// rejects reports whether the schema validators reject v, a value in the
// Karmada JSON document built from the configuration (string, int64,
// json.RawMessage, []any or map[string]any).
func (c attrConstraint) rejects(v any) bool {
	switch t := v.(type) {
	case string:
		n := utf8.RuneCountInString(t)
		return (len(c.oneOf) > 0 && !slices.Contains(c.oneOf, t)) ||
			(c.minLen > 0 && n < c.minLen) || (c.maxLen > 0 && n > c.maxLen)
	case int64:
		return (c.min != nil && t < *c.min) || (c.max != nil && t > *c.max)
	case []any:
		return c.minItems > 0 && len(t) < c.minItems
	case json.RawMessage:
		return c.json && !json.Valid(t)
	case map[string]any:
		if c.quantity {
			for _, q := range t {
				if s, ok := q.(string); !ok || quantityError(s) != nil {
					return true
				}
			}
		}
	}
	return false
}

// jsonTextValidator accepts a string that parses as JSON, which is what the
// `value` of plaintext and field overriders holds (written with jsonencode).
type jsonTextValidator struct{}

// Description implements the validator or plan modifier interface.
func (jsonTextValidator) Description(context.Context) string {
	return "value must be valid JSON, for example written with jsonencode()"
}

// MarkdownDescription implements the validator or plan modifier interface.
func (v jsonTextValidator) MarkdownDescription(ctx context.Context) string {
	return "value must be valid JSON, for example written with `jsonencode()`"
}

// ValidateString implements validator.String.
func (jsonTextValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var v any
	if err := json.Unmarshal([]byte(req.ConfigValue.ValueString()), &v); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid JSON value",
			fmt.Sprintf("Attribute %s must hold JSON, for example jsonencode(\"text\") or jsonencode({ a = 1 }): %v", req.Path, err))
	}
}

// quantityValidator accepts a Kubernetes quantity, as a ResourceQuota's
// hard limits hold them: "2", "500m", "4Gi".
type quantityValidator struct{}

// Description implements the validator interface.
func (quantityValidator) Description(context.Context) string {
	return "value must be a Kubernetes quantity, for example \"2\", \"500m\" or \"4Gi\""
}

// MarkdownDescription implements the validator interface.
func (v quantityValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

// ValidateString implements validator.String.
func (quantityValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := quantityError(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid quantity",
			fmt.Sprintf("Attribute %s: %v; write a Kubernetes quantity such as \"2\", \"500m\" or \"4Gi\".", req.Path, err))
	}
}

// quantityError says why s is not a quantity; nil when it is one.
func quantityError(s string) error {
	if _, err := resource.ParseQuantity(s); err != nil {
		return fmt.Errorf("%q is not a quantity: %w", s, err)
	}
	return nil
}
