package shared

import (
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// StatusGeneration is the key under which the work status controller keeps
// the member object's metadata.generation in a manifest status, as Karmada
// does for its workloads. Aggregation needs it for the observedGeneration
// rule and drops it from the binding's aggregatedStatus.
const StatusGeneration = "generation"

// ManifestStatusOf finds the status of the template's object in a Work.
func ManifestStatusOf(statuses []api.ManifestStatus, ref api.TemplateRef) *api.ManifestStatus {
	for i, ms := range statuses {
		id := ms.Identifier
		if id.Group == ref.Group && id.Kind == ref.Kind && id.Namespace == ref.Namespace && id.Name == ref.Name {
			return &statuses[i]
		}
	}
	return nil
}

// SplitStatus decodes a manifest status into the reflected status, without
// the member generation the work status controller adds, and the two
// generations.
func SplitStatus(raw *runtime.RawExtension) (status map[string]any, generation, observed int64) {
	if raw == nil || len(raw.Raw) == 0 {
		return nil, 0, 0
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw.Raw, &m); err != nil {
		return nil, 0, 0
	}
	generation, _ = m[StatusGeneration].(int64)
	observed, _ = m["observedGeneration"].(int64)
	// An empty object stays one: a reflected status of {} says nothing,
	// which is not the same as no status (a script branches on
	// item.status == nil). StatusGeneration is only ever written beside
	// observedGeneration, so removing it never empties a status.
	delete(m, StatusGeneration)
	return m, generation, observed
}
