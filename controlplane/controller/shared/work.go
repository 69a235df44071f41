package shared

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// ExecutionNamespacePrefix starts the name of the host namespace that holds
// the Works of one member cluster: "flotilla-es-<cluster>" in flotilla's
// API groups, Karmada's own "karmada-es-<cluster>" in Karmada's
// (apis.Groups). Cluster names are at most 48 characters, so the namespace
// name fits a DNS label.
func ExecutionNamespacePrefix() string {
	return apis.Current().ExecutionNamespacePrefix()
}

// anyExecutionNamespace reports whether ns is an execution namespace of
// either family of API groups: a control plane in one never propagates
// the Works' namespaces of one in the other, should both share a host.
func anyExecutionNamespace(ns string) bool {
	return strings.HasPrefix(ns, apis.FlotillaGroups.ExecutionNamespacePrefix()) ||
		strings.HasPrefix(ns, apis.KarmadaGroups.ExecutionNamespacePrefix())
}

// Labels and annotations that tie a Work to its ResourceBinding, Karmada's
// resourcebinding.karmada.io keys in flotilla's group. The binding is found
// from a Work by the annotations (a binding name may be longer than a label
// value), and its Works from the binding by the permanent-id label, which
// holds the binding's UID.
const (
	// LabelBindingPermanentID holds the UID of the binding a Work was rendered for.
	LabelBindingPermanentID = "resourcebinding.flotilla.io/permanent-id"
	// AnnotationBindingNamespace holds the namespace of the Work's binding.
	AnnotationBindingNamespace = "resourcebinding.flotilla.io/namespace"
	// AnnotationBindingName holds the name of the Work's binding.
	AnnotationBindingName = "resourcebinding.flotilla.io/name"
	// AnnotationConflictResolution carries the binding's conflict
	// resolution (Abort, the default, or Overwrite) to the execution
	// controller, as Karmada's work.karmada.io/conflict-resolution does;
	// api.WorkSpec has no field for it.
	AnnotationConflictResolution = "work.flotilla.io/conflict-resolution"
	// AnnotationTemplateGeneration holds the metadata.generation of the
	// resource template the Work was rendered from (Karmada's
	// resourcetemplate.karmada.io/generation). Status aggregation needs it
	// to tell when every member runs the template's latest generation.
	AnnotationTemplateGeneration = "resourcetemplate.flotilla.io/generation"
	// LabelExecutionSpace marks a namespace created to hold the Works of
	// the member cluster it names.
	LabelExecutionSpace = "cluster.flotilla.io/execution-space"
)

// maxNameLength is the longest object name the apiserver accepts for a Work.
const maxNameLength = 253

// ExecutionNamespace is the host namespace holding the Works of cluster.
func ExecutionNamespace(cluster string) string {
	return ExecutionNamespacePrefix() + cluster
}

// ClusterOfNamespace returns the member cluster of an execution namespace,
// or false when namespace is not one.
func ClusterOfNamespace(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, ExecutionNamespacePrefix())
	if !ok || cluster == "" {
		return "", false
	}
	return cluster, true
}

// WorkName is the name of the Works of a template, the same in every
// execution namespace: Karmada's "<name>-<hash>". The hash covers group,
// kind, namespace and name, so two templates named alike never share a Work;
// the version is left out, as in api.TemplateRef.ID, so a template moved
// to a new API version keeps its Works. Characters a Work name may not hold
// (':' in RBAC names, capitals) are replaced, and a long name is shortened
// so the result stays within 253 characters.
func WorkName(ref api.TemplateRef) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ref.Group + "/" + ref.Kind + "/" + ref.Namespace + "/" + ref.Name))
	suffix := "-" + rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
	name := strings.ReplaceAll(strings.ToLower(ref.Name), ":", ".")
	if len(name)+len(suffix) > maxNameLength {
		name = strings.TrimRight(name[:maxNameLength-len(suffix)], ".-")
	}
	return name + suffix
}

// BindingOfWork returns the key of the binding a Work was rendered for, or
// false when the Work does not name one.
func BindingOfWork(w client.Object) (client.ObjectKey, bool) {
	a := w.GetAnnotations()
	key := client.ObjectKey{Namespace: a[AnnotationBindingNamespace], Name: a[AnnotationBindingName]}
	return key, key.Name != ""
}

// MergeWork returns have with want's spec, labels, annotations and
// finalizer, and whether that changed anything. Labels, annotations and
// finalizers others put on the Work are kept; the rollout's stable copy
// (bindingOwnedAnnotations) goes when want has none.
func MergeWork(have, want *workv1.Work) (*workv1.Work, bool) {
	merged := have.DeepCopy()
	changed := false
	set := func(m *map[string]string, k, v string) {
		if cur, ok := (*m)[k]; ok && cur == v {
			return
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k], changed = v, true
	}
	for k, v := range want.Labels {
		set(&merged.Labels, k, v)
	}
	for k, v := range want.Annotations {
		set(&merged.Annotations, k, v)
	}
	for _, k := range BindingOwnedAnnotations {
		if _, keep := want.Annotations[k]; !keep {
			if _, ok := merged.Annotations[k]; ok {
				delete(merged.Annotations, k)
				changed = true
			}
		}
	}
	for _, f := range want.Finalizers {
		if !slices.Contains(merged.Finalizers, f) {
			merged.Finalizers, changed = append(merged.Finalizers, f), true
		}
	}
	if !SameWorkSpec(merged.Spec, want.Spec) {
		merged.Spec, changed = *want.Spec.DeepCopy(), true
	}
	return merged, changed
}

// SameWorkSpec compares two Work specs, the manifests by their JSON value:
// the apiserver may encode a stored manifest differently from the renderer.
func SameWorkSpec(a, b api.WorkSpec) bool {
	if !equalBool(a.SuspendDispatching, b.SuspendDispatching) || !equalBool(a.PreserveResourcesOnDeletion, b.PreserveResourcesOnDeletion) {
		return false
	}
	if len(a.Workload.Manifests) != len(b.Workload.Manifests) {
		return false
	}
	for i := range a.Workload.Manifests {
		var x, y any
		if json.Unmarshal(a.Workload.Manifests[i].Raw, &x) != nil || json.Unmarshal(b.Workload.Manifests[i].Raw, &y) != nil {
			return false
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// equalBool compares two optional booleans, nil counting as false.
func equalBool(a, b *bool) bool {
	return (a != nil && *a) == (b != nil && *b)
}

// Manifests decodes the objects of a Work.
func Manifests(w *workv1.Work) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(w.Spec.Workload.Manifests))
	for i, m := range w.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err != nil {
			return nil, fmt.Errorf("decode manifest %d of work %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// WorkSuspended reports whether a Work's dispatch is held back
// (spec.suspendDispatching, Karmada's dispatch suspension).
func WorkSuspended(w *workv1.Work) bool {
	return w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
}
