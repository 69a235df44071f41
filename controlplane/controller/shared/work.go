package shared

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// ExecutionNamespacePrefix starts the name of the host namespace that holds
// the Works of one member cluster: "flotilla-es-<cluster>", Karmada's
// "karmada-es-<cluster>" in flotilla's own prefix. Cluster names are at most
// 48 characters, so the namespace name fits a DNS label.
const ExecutionNamespacePrefix = "flotilla-es-"

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
	return ExecutionNamespacePrefix + cluster
}

// ClusterOfNamespace returns the member cluster of an execution namespace,
// or false when namespace is not one.
func ClusterOfNamespace(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, ExecutionNamespacePrefix)
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

// NewWork builds the Work that carries one rendered object to its cluster.
// Its conflict resolution and preserveResourcesOnDeletion are the trusted
// ones, never the binding's own copy.
func NewWork(rb *workv1.ResourceBinding, rendered render.Work, templateGeneration int64, t *Trusted) (*workv1.Work, error) {
	raw, err := render.CanonicalJSON(rendered.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the object rendered for cluster %s: %w", rendered.Cluster, err)
	}
	w := &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ExecutionNamespace(rendered.Cluster),
			Name:      WorkName(api.TemplateRefOf(rendered.Object)),
			Labels:    map[string]string{LabelBindingPermanentID: string(rb.UID)},
			Annotations: map[string]string{
				AnnotationBindingNamespace:   rb.Namespace,
				AnnotationBindingName:        rb.Name,
				AnnotationTemplateGeneration: strconv.FormatInt(templateGeneration, 10),
			},
			Finalizers: []string{FinalizerExecution},
		},
		Spec: api.WorkSpec{
			Workload:                    api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			PreserveResourcesOnDeletion: t.Preserve,
			// Written and held back, as Karmada's binding controller does.
			SuspendDispatching: suspendDispatching(rb.Spec.Suspension, rendered.Cluster),
		},
	}
	// The effective value is written, so the Work says what the execution
	// controller will do; the execution controller derives it again.
	cr := t.Conflict
	if cr == "" {
		cr = api.ConflictAbort
	}
	w.Annotations[AnnotationConflictResolution] = string(cr)
	return w, nil
}

// WorkPlan is what the binding controller writes to make a binding's Works
// match its schedule.
type WorkPlan struct {
	// Write are Works to create (no resourceVersion) or update.
	Write []*workv1.Work
	// Remove are Works of clusters the binding left.
	Remove []*workv1.Work
	// Kept are the clusters under graceful eviction whose Work stays,
	// suspended, until the task ends.
	Kept []string
	// Removing are the clusters whose Work is being deleted and not wanted.
	Removing []*workv1.Work
	// blocked are the desired Works whose name is held by a Work being
	// deleted; they are created once it is gone.
	blocked []string
}

// PlanWorks compares the desired Works (by cluster) with the existing ones
// (the binding's, found by label, plus any holding a desired name) and says
// what to write. A Work of a cluster under graceful eviction is kept with
// spec.suspendDispatching set: its copy in the member is neither applied
// again nor removed until the task ends. Everything else not desired is
// removed. The namespace sync's Work holding a desired name is taken over.
// An existing Work is rewritten only when it differs, so an unchanged
// binding writes nothing.
func PlanWorks(desired map[string]*workv1.Work, existing []workv1.Work, evicting func(cluster string) bool) WorkPlan {
	var p WorkPlan
	byKey := make(map[client.ObjectKey]*workv1.Work, len(existing))
	for i := range existing {
		byKey[client.ObjectKeyFromObject(&existing[i])] = &existing[i]
	}
	wanted := make(map[client.ObjectKey]bool, len(desired))
	for _, cluster := range slices.Sorted(maps.Keys(desired)) {
		want := desired[cluster]
		key := client.ObjectKeyFromObject(want)
		wanted[key] = true
		have, ok := byKey[key]
		switch {
		case !ok:
			p.Write = append(p.Write, want)
		case !have.DeletionTimestamp.IsZero():
			p.blocked = append(p.blocked, cluster)
		default:
			// A Namespace's Work the namespace sync wrote becomes the
			// binding's in place: deleting it would remove the namespace
			// from the member.
			base, taken := takeOverFromSync(have)
			if merged, changed := MergeWork(base, want); changed || taken {
				p.Write = append(p.Write, merged)
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(byKey), func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	for _, key := range keys {
		have := byKey[key]
		cluster, ok := ClusterOfNamespace(have.Namespace)
		if wanted[key] || !ok {
			continue
		}
		switch {
		case !have.DeletionTimestamp.IsZero():
			p.Removing = append(p.Removing, have)
		case evicting(cluster):
			p.Kept = append(p.Kept, cluster)
			if d := have.Spec.SuspendDispatching; d == nil || !*d {
				suspended := have.DeepCopy()
				suspended.Spec.SuspendDispatching = ptr.To(true)
				p.Write = append(p.Write, suspended)
			}
		default:
			p.Remove = append(p.Remove, have)
		}
	}
	return p
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
