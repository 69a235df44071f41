package interpret

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Health is the health of one object in one member, or of a template across
// its members. The values are Karmada's ResourceHealth values, so they read
// the same in a ResourceBinding's aggregatedStatus.
type Health string

const (
	// Healthy means the object does what its spec asks: a workload has its
	// replicas available, a load balancer has an address, a claim is bound.
	Healthy Health = "Healthy"
	// Unhealthy means the object exists but is not there yet, or failed.
	Unhealthy Health = "Unhealthy"
	// Unknown means the object could not be judged: it was not found, its
	// member was unreachable, or its status could not be read.
	Unknown Health = "Unknown"
)

// healthRule judges one kind. generation is metadata.generation.
type healthRule func(r *fields, generation int64) (Health, string)

// InterpretHealth judges a live object read from a member and says why in a
// short human message ("2/3 replicas available", "waiting for load balancer
// ingress"): Karmada's InterpretHealth. A nil object is Unknown ("not
// found"). Kinds without a rule are Healthy once they exist, as in Karmada,
// which treats a kind without a health interpreter as healthy. A status
// field of the wrong type makes the object Unknown rather than guessed at.
func InterpretHealth(obj *unstructured.Unstructured) (Health, string) {
	if obj == nil {
		return Unknown, "not found"
	}
	rule := Of(obj).health
	if rule == nil {
		return Healthy, "exists"
	}
	r := &fields{obj: obj.Object}
	h, msg := rule(r, obj.GetGeneration())
	if r.err != nil {
		return Unknown, "cannot interpret status: " + r.err.Error()
	}
	return h, msg
}

// fields reads typed values out of an unstructured object. It remembers the
// first malformed field instead of failing each read, so a rule reads
// straight through and Interpret checks once.
type fields struct {
	obj map[string]any
	err error
}

// value returns the field at path and whether it is present and not null.
func (f *fields) value(path ...string) (any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(f.obj, path...)
	if err != nil {
		f.fail(fmt.Errorf("%s: %w", strings.Join(path, "."), err))
		return nil, false
	}
	return v, found && v != nil
}

func (f *fields) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// integer returns an integer field and whether it is present. JSON numbers
// decode as int64 from an apiserver but may be int or float64 when built by
// hand, so all three are accepted.
func (f *fields) integer(path ...string) (int64, bool) {
	v, ok := f.value(path...)
	if !ok {
		return 0, false
	}
	n, ok := toInt64(v)
	if !ok {
		f.fail(fmt.Errorf("%s is %T, want an integer", strings.Join(path, "."), v))
		return 0, false
	}
	return n, true
}

// num returns an integer field, 0 when absent.
func (f *fields) num(path ...string) int64 {
	n, _ := f.integer(path...)
	return n
}

// str returns a string field, "" when absent.
func (f *fields) str(path ...string) string {
	v, ok := f.value(path...)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.fail(fmt.Errorf("%s is %T, want a string", strings.Join(path, "."), v))
	}
	return s
}

// boolean returns a bool field, false when absent.
func (f *fields) boolean(path ...string) bool {
	v, ok := f.value(path...)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		f.fail(fmt.Errorf("%s is %T, want a bool", strings.Join(path, "."), v))
	}
	return b
}

// maps returns a list field whose items are objects, nil when absent.
func (f *fields) maps(path ...string) []map[string]any {
	v, ok := f.value(path...)
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		f.fail(fmt.Errorf("%s is %T, want a list", strings.Join(path, "."), v))
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			f.fail(fmt.Errorf("%s[%d] is %T, want an object", strings.Join(path, "."), i, item))
			return nil
		}
		out = append(out, m)
	}
	return out
}

// condition returns the condition of the given type from status.conditions
// (or the list at path), nil when there is none.
func (f *fields) condition(conditionType string, path ...string) map[string]any {
	if len(path) == 0 {
		path = []string{"status", "conditions"}
	}
	for _, c := range f.maps(path...) {
		if t, _ := c["type"].(string); t == conditionType {
			return c
		}
	}
	return nil
}

// conditionIs reports whether condition c has status s.
func conditionIs(c map[string]any, s string) bool {
	status, _ := c["status"].(string)
	return c != nil && status == s
}

// conditionText is "<reason>: <message>", or whichever of the two is set.
func conditionText(c map[string]any) string {
	reason, _ := c["reason"].(string)
	message, _ := c["message"].(string)
	switch {
	case reason != "" && message != "":
		return reason + ": " + message
	case reason != "":
		return reason
	default:
		return message
	}
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return int64(n), true
	default:
		return 0, false
	}
}

// generationObserved checks status.observedGeneration against
// metadata.generation, the guard every controller-driven kind starts with:
// until the controller has seen the latest spec, its status describes an
// older one.
func generationObserved(r *fields, generation int64) (string, bool) {
	observed := r.num("status", "observedGeneration")
	if observed != generation {
		return fmt.Sprintf("waiting for the controller to observe generation %d (observed %d)", generation, observed), false
	}
	return "", true
}
