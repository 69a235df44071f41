package terraform

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Every RPC of flotilla_manifest works on the raw Terraform value, through
// decodeManifest, rather than on a framework model: reading a model
// converts every Dynamic attribute (the fleet by value, rendered) into
// framework values and setting it converts them all back, which profiles of
// a 10-member, 100-app plan showed costing more than the planning itself.
// Only the attributes an RPC changes are rebuilt; the rest travel untouched.

// Attribute names of flotilla_manifest.
const (
	attrManifest             = "manifest"
	attrClusters             = "clusters"
	attrPropagationPolicies  = "propagation_policies"
	attrOverridePolicies     = "override_policies"
	attrResourceInterpreters = "resource_interpreters"
	attrQuotas               = "federated_resource_quotas"
	attrConnections          = "connections"
	attrDependencies         = "dependencies"
	attrRescheduleTrigger    = "reschedule_trigger"
	attrWaitForRollout       = "wait_for_rollout"
	attrTimeouts             = "timeouts"
	attrPlacement            = "placement"
	attrRendered             = "rendered"
	attrDependenciesRendered = "dependencies_rendered"
	attrPolicy               = "policy"
	attrAffinityTerm         = "affinity_term"
	attrStatus               = "status"
)

// Raw values of flotilla_manifest's computed attributes' types.
var (
	placementType  = tftypes.Map{ElementType: tftypes.Number}
	dynamicUnknown = tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)
	stringNull     = tftypes.NewValue(tftypes.String, nil)
	stringUnknown  = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
)

// rawAttributes returns the attributes of a known object value.
func rawAttributes(v tftypes.Value) (map[string]tftypes.Value, error) {
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return nil, fmt.Errorf("read resource value: %w", err)
	}
	return attrs, nil
}

// withAttributes returns the object v with the attributes in set replaced.
func withAttributes(v tftypes.Value, set map[string]tftypes.Value) (tftypes.Value, error) {
	attrs, err := rawAttributes(v)
	if err != nil {
		return tftypes.Value{}, err
	}
	out := make(map[string]tftypes.Value, len(attrs))
	for k, a := range attrs {
		out[k] = a
	}
	for k, a := range set {
		if _, ok := out[k]; !ok {
			return tftypes.Value{}, fmt.Errorf("set attribute %q: not in the resource's schema", k)
		}
		out[k] = a
	}
	if err := tftypes.ValidateValue(v.Type(), out); err != nil {
		return tftypes.Value{}, fmt.Errorf("set attributes: %w", err)
	}
	return tftypes.NewValue(v.Type(), out), nil
}

// rawString reads a string attribute; null and unknown read as "".
func rawString(v tftypes.Value) string {
	var s string
	if v.IsKnown() && !v.IsNull() {
		_ = v.As(&s)
	}
	return s
}

// rawPlacement reads the placement attribute: cluster → replicas. Null or
// unknown reads as nil.
func rawPlacement(v tftypes.Value) (map[string]int64, error) {
	if !v.IsKnown() || v.IsNull() {
		return nil, nil
	}
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	out := make(map[string]int64, len(elems))
	for k, e := range elems {
		f := new(big.Float)
		if err := e.As(&f); err != nil {
			return nil, fmt.Errorf("placement[%q]: %w", k, err)
		}
		out[k], _ = f.Int64()
	}
	return out, nil
}

// placementValue is the raw placement attribute.
func placementValue(counts map[string]int64) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(counts))
	for k, n := range counts {
		elems[k] = tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(n))
	}
	return tftypes.NewValue(placementType, elems)
}

// rawFromJSON converts a decoded JSON value into a raw Terraform value of
// exactly the type valueFromJSON gives: objects become objects, arrays
// tuples, JSON null a null string.
func rawFromJSON(v any) (tftypes.Value, error) {
	switch t := v.(type) {
	case nil:
		return stringNull, nil
	case string:
		return tftypes.NewValue(tftypes.String, t), nil
	case bool:
		return tftypes.NewValue(tftypes.Bool, t), nil
	case json.Number:
		f, _, err := big.ParseFloat(t.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("number %q: %w", t.String(), err)
		}
		return tftypes.NewValue(tftypes.Number, f), nil
	case float64:
		return tftypes.NewValue(tftypes.Number, big.NewFloat(t)), nil
	case int64:
		return tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(t)), nil
	case []any:
		elems := make([]tftypes.Value, len(t))
		elemTypes := make([]tftypes.Type, len(t))
		for i, e := range t {
			ev, err := rawFromJSON(e)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i], elemTypes[i] = ev, ev.Type()
		}
		return tftypes.NewValue(tftypes.Tuple{ElementTypes: elemTypes}, elems), nil
	case map[string]any:
		attrs := make(map[string]tftypes.Value, len(t))
		attrTypes := make(map[string]tftypes.Type, len(t))
		for k, e := range t {
			ev, err := rawFromJSON(e)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", k, err)
			}
			attrs[k], attrTypes[k] = ev, ev.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: attrTypes}, attrs), nil
	default:
		return tftypes.Value{}, fmt.Errorf("unsupported value of type %T", v)
	}
}

// contentKey identifies a raw value by its type and content, for the
// decode cache. Values that differ only in the order of set elements or
// object attributes get the same key, as msgpack encodes them in order.
func contentKey(prefix string, v tftypes.Value) ([sha256.Size]byte, error) {
	dv, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, v)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("encode value: %w", err)
	}
	b := dv.MsgPack
	h := sha256.New()
	h.Write([]byte(prefix))
	h.Write([]byte{0})
	h.Write(b)
	var key [sha256.Size]byte
	copy(key[:], h.Sum(nil))
	return key, nil
}
