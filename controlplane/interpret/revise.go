package interpret

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReviseReplica sets a workload's replica field (Kind.ReplicaField) to a
// cluster's share: Karmada's ReviseReplica. As Karmada's ApplyReplica does,
// it changes the field only when the template sets it, so a template
// without it runs the kind's default everywhere. Kinds without a replica
// field are left alone. Karmada leaves ReplicaSet to a customized
// interpreter in older releases; flotilla revises it because the scheduler
// divides its replicas like a Deployment's.
func ReviseReplica(obj *unstructured.Unstructured, replicas int64) error {
	field := Of(obj).ReplicaField
	if field == "" {
		return nil
	}
	return SetSpecIfPresent(obj, field, replicas)
}

// SetSpecIfPresent replaces spec.<field> with value when the object has the
// field, refusing a present value that is not a whole number.
func SetSpecIfPresent(obj *unstructured.Unstructured, field string, value int64) error {
	if _, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", field); err != nil || !found {
		return err
	}
	if _, err := SpecInt(obj, field); err != nil {
		return err
	}
	return unstructured.SetNestedField(obj.Object, value, "spec", field)
}

// SpecInt reads a whole number from spec.<field>, whatever numeric type the
// decoder used.
func SpecInt(obj *unstructured.Unstructured, field string) (int64, error) {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", field)
	switch n := v.(type) {
	case int64:
		return n, nil
	case float64:
		// Converting a float beyond int64 is implementation-defined in Go,
		// so such values are refused before the conversion.
		if n >= -(1<<63) && n < 1<<63 && n == float64(int64(n)) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("spec.%s is %v, not a whole number", field, v)
}
