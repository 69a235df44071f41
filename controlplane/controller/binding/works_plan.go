package binding

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// newWork builds the Work that carries one rendered object to its cluster.
// Its conflict resolution and preserveResourcesOnDeletion are the trusted
// ones, never the binding's own copy.
func newWork(rb *workv1.ResourceBinding, rendered render.Work, templateGeneration int64, t *shared.Trusted) (*workv1.Work, error) {
	raw, err := render.CanonicalJSON(rendered.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the object rendered for cluster %s: %w", rendered.Cluster, err)
	}
	w := &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: shared.ExecutionNamespace(rendered.Cluster),
			Name:      shared.WorkName(api.TemplateRefOf(rendered.Object)),
			Labels:    map[string]string{shared.LabelBindingPermanentID: string(rb.UID)},
			Annotations: map[string]string{
				shared.AnnotationBindingNamespace:   rb.Namespace,
				shared.AnnotationBindingName:        rb.Name,
				shared.AnnotationTemplateGeneration: strconv.FormatInt(templateGeneration, 10),
			},
			Finalizers: []string{shared.FinalizerExecution},
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
	w.Annotations[shared.AnnotationConflictResolution] = string(cr)
	return w, nil
}

// workPlan is what the binding controller writes to make a binding's Works
// match its schedule.
type workPlan struct {
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

// planWorks compares the desired Works (by cluster) with the existing ones
// (the binding's, found by label, plus any holding a desired name) and says
// what to write. A Work of a cluster under graceful eviction is kept with
// spec.suspendDispatching set: its copy in the member is neither applied
// again nor removed until the task ends. Everything else not desired is
// removed. The namespace sync's Work holding a desired name is taken over.
// An existing Work is rewritten only when it differs, so an unchanged
// binding writes nothing.
func planWorks(desired map[string]*workv1.Work, existing []workv1.Work, evicting func(cluster string) bool) workPlan {
	var p workPlan
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
			if merged, changed := shared.MergeWork(base, want); changed || taken {
				p.Write = append(p.Write, merged)
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(byKey), func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	for _, key := range keys {
		have := byKey[key]
		cluster, ok := shared.ClusterOfNamespace(have.Namespace)
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

// suspendDispatching is a Work's spec.suspendDispatching for cluster under
// the binding's suspension: true or unset, as Karmada writes it.
func suspendDispatching(s *api.BindingSuspension, cluster string) *bool {
	if s == nil || !api.DispatchSuspended(&s.Suspension, cluster) {
		return nil
	}
	return ptr.To(true)
}

// dispatchingCondition sets or removes the binding's Dispatching condition:
// False, naming the held-back clusters, while the suspension holds any of
// the scheduled ones back; absent otherwise.
func dispatchingCondition(conds *[]metav1.Condition, s *api.BindingSuspension, placed []string, generation int64, now time.Time) {
	var held []string
	for _, c := range placed {
		if suspendDispatching(s, c) != nil {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		apimeta.RemoveStatusCondition(conds, api.ConditionDispatching)
		return
	}
	apimeta.SetStatusCondition(conds, metav1.Condition{
		Type: api.ConditionDispatching, Status: metav1.ConditionFalse, Reason: api.ReasonSuspendDispatching, ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
		Message: fmt.Sprintf("the propagation policy suspends dispatching to cluster %s: the works are written and not applied until the suspension is lifted",
			strings.Join(held, ", ")),
	})
}

// suspendedHeld lists the placed clusters whose Work is held back and was
// not applied at its current generation.
func suspendedHeld(placed []string, works map[string]*workv1.Work) []string {
	var out []string
	for _, c := range placed {
		if w := works[c]; w != nil && shared.WorkSuspended(w) && !slices.Contains(out, c) {
			if a := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied); a == nil || a.ObservedGeneration != w.Generation {
				out = append(out, c)
			}
		}
	}
	return out
}
