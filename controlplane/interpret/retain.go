package interpret

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RetainReplicasLabel on a resource template says that its members own
// spec.replicas once the workload exists there (an HPA scales it): Karmada's
// resourcetemplate.karmada.io/retain-replicas.
const RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"

// RetainReplicasValue is the only value of RetainReplicasLabel that retains.
const RetainReplicasValue = "true"

// retainer leaves one member-owned part of a kind to the member: it changes
// desired, the object about to be applied, given the object observed in the
// member, and returns the paths it took out.
type retainer func(desired, observed *unstructured.Unstructured) [][]string

// Retain is Karmada's Retain operation in server-side-apply terms: it takes
// out of desired, the object flotilla is about to apply to a member, the
// fields the member owns once the object exists there (observed, nil when
// it does not exist yet). Karmada copies the member's values into the
// object it updates; with server-side apply the same effect comes from not
// applying the field at all, so flotilla never claims it and never resets
// it. Karmada's other retention rules (a Pod's nodeName and volumes, a
// claim's volumeName, a volume's claimRef, a Job's generated selector, a
// token Secret's data, a Service's cluster IPs) concern fields flotilla
// prunes or never sets, which server-side apply already leaves to the
// member.
//
// It returns the paths it took out of desired, so the applier can hand
// their ownership over first: a field its field manager alone owned would
// otherwise be removed by the apiserver (and defaulted back, replicas to 1)
// rather than left as it is.
func Retain(desired, observed *unstructured.Unstructured) [][]string {
	if observed == nil {
		return nil
	}
	var out [][]string
	for _, r := range Of(desired).retain {
		out = append(out, r(desired, observed)...)
	}
	return out
}

// RetainsReplicas reports whether a template's replicas belong to its
// members after creation: Karmada's retain-replicas label on a kind with a
// replicas field.
func RetainsReplicas(tmpl *unstructured.Unstructured) bool {
	return Of(tmpl).ReplicaField == "replicas" && tmpl.GetLabels()[RetainReplicasLabel] == RetainReplicasValue
}

// retainReplicas is Karmada's retainWorkloadReplicas: with the
// retain-replicas label, spec.replicas is the member's once the workload
// exists. Karmada registers it for Deployment only; flotilla also applies it
// to StatefulSet and ReplicaSet, which an HPA scales the same way.
func retainReplicas(desired, _ *unstructured.Unstructured) [][]string {
	if desired.GetLabels()[RetainReplicasLabel] != RetainReplicasValue {
		return nil
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas"); !found {
		return nil
	}
	unstructured.RemoveNestedField(desired.Object, "spec", "replicas")
	return [][]string{{"spec", "replicas"}}
}
