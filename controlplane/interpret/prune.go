package interpret

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverMetadata are the metadata fields an apiserver populates or that
// belong to the object in the hub, never to its copy in a member.
var serverMetadata = []string{
	"creationTimestamp",
	"deletionTimestamp",
	"deletionGracePeriodSeconds",
	"generation",
	"managedFields",
	"resourceVersion",
	"selfLink",
	"uid",
	"ownerReferences",
	"finalizers",
}

// jobGeneratedLabels are the labels the Job controller puts in a Job's
// selector and pod template when it generates the selector; they carry the
// hub Job's UID and would never match in a member.
var jobGeneratedLabels = []string{
	"controller-uid",
	"batch.kubernetes.io/controller-uid",
	"job-name",
	"batch.kubernetes.io/job-name",
}

// pruner removes the fields of one kind that belong to the hub's copy.
type pruner func(obj *unstructured.Unstructured)

// Prune removes what Karmada's RemoveIrrelevantFields (with its Job TTL
// hook) removes before a manifest goes to a member: server-populated
// metadata, status, and per kind a Service's allocated cluster IPs, a Job's
// generated selector and its TTL, and a ServiceAccount's generated token
// secrets.
func Prune(obj *unstructured.Unstructured) {
	for _, field := range serverMetadata {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	if p := Of(obj).prune; p != nil {
		p(obj)
	}
}

// pruneService drops the cluster IPs the hub allocated. A headless Service
// ("None") asks for no IP; that request is kept.
func pruneService(obj *unstructured.Unstructured) {
	if ip, found, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); found && ip != "None" {
		unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
	}
}

// pruneJob drops the TTL: the TTL controller of a member would delete the
// finished Job, and flotilla would create it again; Karmada removes it for
// that reason (karmada#2197). A generated selector is dropped too.
func pruneJob(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); !manual {
		pruneJobSelector(obj)
	}
}

// pruneJobSelector drops the generated labels from a Job's selector and pod
// template. A selector left empty is removed so the member generates its
// own, as it must when manualSelector is unset.
func pruneJobSelector(obj *unstructured.Unstructured) {
	for _, path := range [][]string{{"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
		labels, found, _ := unstructured.NestedMap(obj.Object, path...)
		if !found {
			continue
		}
		for _, key := range jobGeneratedLabels {
			delete(labels, key)
		}
		_ = unstructured.SetNestedMap(obj.Object, labels, path...)
	}
	selector, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found {
		return
	}
	matchLabels, _ := selector["matchLabels"].(map[string]any)
	expressions, _ := selector["matchExpressions"].([]any)
	if len(matchLabels) == 0 && len(expressions) == 0 {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector")
	}
}

// pruneTokenSecrets drops the "<name>-token-" secrets the hub's token
// controller attached to a ServiceAccount.
func pruneTokenSecrets(obj *unstructured.Unstructured) {
	secrets, found, _ := unstructured.NestedSlice(obj.Object, "secrets")
	if !found {
		return
	}
	prefix := obj.GetName() + "-token-"
	kept := make([]any, 0, len(secrets))
	for _, s := range secrets {
		if ref, ok := s.(map[string]any); ok {
			if name, _ := ref["name"].(string); strings.HasPrefix(name, prefix) {
				continue
			}
		}
		kept = append(kept, s)
	}
	_ = unstructured.SetNestedSlice(obj.Object, kept, "secrets")
}
