package terraform

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// suspended_clusters: the placed clusters the claiming policy's suspension
// holds back (Karmada's suspension.dispatching and
// dispatchingOnClusters). They stay in placement and rendered, so the plan
// shows what they will get once the suspension is lifted; apply applies
// nothing to them and prunes nothing from them, refresh leaves their
// recorded object alone, and lifting the suspension shows as a change of
// this attribute that the next apply carries out.
const attrSuspendedClusters = "suspended_clusters"

var suspendedType = tftypes.Set{ElementType: tftypes.String}

// suspendedValue is the attribute's value: null when no cluster is held
// back, so states written before the attribute existed plan no change.
func suspendedValue(clusters []string) tftypes.Value {
	if len(clusters) == 0 {
		return tftypes.NewValue(suspendedType, nil)
	}
	elems := make([]tftypes.Value, len(clusters))
	for i, c := range clusters {
		elems[i] = tftypes.NewValue(tftypes.String, c)
	}
	return tftypes.NewValue(suspendedType, elems)
}

// rawSuspended reads the attribute; null or unknown read as none.
func rawSuspended(v tftypes.Value) ([]string, error) {
	if !v.IsKnown() || v.IsNull() {
		return nil, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("%s: %w", attrSuspendedClusters, err)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if err := e.As(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", attrSuspendedClusters, err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

// withoutSuspended splits off the held-back clusters' recorded objects,
// which refresh leaves as they are: nothing is dispatched to them, so what
// runs there is not flotilla's to correct until the suspension is lifted.
func withoutSuspended(objects map[string]*unstructured.Unstructured, suspended []string) (map[string]*unstructured.Unstructured, map[string]map[string]any) {
	held := map[string]map[string]any{}
	rest := make(map[string]*unstructured.Unstructured, len(objects))
	for cluster, obj := range objects {
		if slices.Contains(suspended, cluster) {
			held[cluster] = obj.Object
			continue
		}
		rest[cluster] = obj
	}
	return rest, held
}
