package terraform

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
)

// An object Karmada's execution controller applied carries
// karmada.io/managed=true and its binding's permanent ID. Importing it by
// an ID that names its cluster is the operator's grant to take it over, as
// adopt-karmada's record is in continuous mode: the import records it, and
// the next apply takes it over in place (execution.KarmadaAdoption), where
// a hand-made object flotilla does not own stays a conflict.

// karmadaBindingOf returns the Karmada binding an object was applied for:
// the permanent ID and whether it is a ClusterResourceBinding's; false when
// Karmada did not apply live.
func karmadaBindingOf(live *unstructured.Unstructured) (string, bool, bool) {
	labels := live.GetLabels()
	if labels[api.KarmadaLabelManaged] != api.KarmadaValueManaged {
		return "", false, false
	}
	if id := labels[api.KarmadaLabelBindingPermanentID]; id != "" {
		return id, false, true
	}
	if id := labels[api.KarmadaLabelClusterBindingPermanentID]; id != "" {
		return id, true, true
	}
	return "", false, false
}

// grantKarmada adds cluster to the import's adoption of live, Karmada's
// object there, and reports whether it was added: every cluster's object
// must come from the same Karmada binding, as one template's do.
func grantKarmada(grant **execution.KarmadaAdoption, cluster string, live *unstructured.Unstructured) bool {
	id, clusterBinding, ok := karmadaBindingOf(live)
	switch {
	case !ok:
		return false
	case *grant == nil:
		*grant = &execution.KarmadaAdoption{BindingPermanentID: id, ClusterBinding: clusterBinding, Label: true}
	case (*grant).BindingPermanentID != id || (*grant).ClusterBinding != clusterBinding:
		return false
	}
	(*grant).Clusters = append((*grant).Clusters, cluster)
	return true
}

// karmadaView is what an import records of an object Karmada applied: the
// object as its template declared it, which is what flotilla renders from
// the configuration, so the plan after the import shows only what taking
// it over changes. Status, the apiserver's metadata, and Karmada's own
// labels and annotations (keys under karmada.io or a *.karmada.io domain,
// which flotilla never manages and leaves on the object) are left out.
func karmadaView(live *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range live.DeepCopy().Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = v
		}
	}
	out.SetName(live.GetName())
	out.SetNamespace(live.GetNamespace())
	out.SetLabels(withoutKarmadaKeys(live.GetLabels()))
	out.SetAnnotations(withoutKarmadaKeys(live.GetAnnotations()))
	return out
}

// withoutKarmadaKeys is m without Karmada's keys; nil when nothing is left.
func withoutKarmadaKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		domain, _, _ := strings.Cut(k, "/")
		if domain != "karmada.io" && !strings.HasSuffix(domain, ".karmada.io") {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// karmadaLeft is what remains of an import's grant after an apply: the
// clusters whose apply did not succeed (ok says which did), whose object
// is still Karmada's; nil when none is left.
func karmadaLeft(grant *execution.KarmadaAdoption, ok map[string]bool) *execution.KarmadaAdoption {
	if grant == nil {
		return nil
	}
	left := *grant
	left.Clusters = nil
	for _, c := range grant.Clusters {
		if !ok[c] {
			left.Clusters = append(left.Clusters, c)
		}
	}
	if len(left.Clusters) == 0 {
		return nil
	}
	return &left
}
