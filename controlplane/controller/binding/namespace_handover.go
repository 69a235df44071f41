package binding

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// A Namespace that a ClusterPropagationPolicy claims and the namespace
// sync would also create has one Work per member either way: both name it
// after the Namespace (WorkName). The policy's binding owns that Work in
// the clusters it places the namespace on, the sync everywhere else. The
// Work changes hands in place and is never deleted on the way, so the
// member namespace (and everything in it) is never removed and never
// flaps: takeOverFromSync makes the sync's Work the binding's, and
// handBackToSync makes a Work the binding no longer wants the sync's again.

// bindingWorkKeys are the labels and annotations that tie a Work to a
// binding; the sync's own Work carries none of them.
var (
	bindingWorkLabels      = []string{shared.LabelBindingPermanentID}
	bindingWorkAnnotations = []string{shared.AnnotationBindingNamespace, shared.AnnotationBindingName, shared.AnnotationTemplateGeneration}
	syncWorkLabels         = []string{shared.LabelNamespaceSyncName, shared.LabelNamespaceSyncID}
)

// takeOverFromSync returns have without the namespace sync's labels when
// it is the sync's Work, so that merged with the binding's Work it is the
// binding's alone (a Work of both is refused), and whether it was the
// sync's.
func takeOverFromSync(have *workv1.Work) (*workv1.Work, bool) {
	if !shared.NamespaceWork(have) {
		return have, false
	}
	taken := have.DeepCopy()
	for _, k := range syncWorkLabels {
		delete(taken.Labels, k)
	}
	return taken, true
}

// handBackToSync turns a Work the binding controller no longer wants into
// the namespace sync's Work, when it carries a Namespace the sync creates
// in every member, instead of letting it be deleted (which would remove
// the member namespace). The sync renders it again on the event. It
// reports whether the Work was handed back; false leaves it to be deleted.
func handBackToSync(ctx context.Context, c client.Client, opts shared.Options, w *workv1.Work) (bool, error) {
	name, ok := syncedNamespaceOf(w)
	if !ok || opts.DisableNamespaceSync {
		return false, nil
	}
	var ns corev1.Namespace
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); {
	case shared.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read namespace %s of work %s/%s: %w", name, w.Namespace, w.Name, err)
	}
	if syncs, _ := shared.SyncsNamespace(&ns, opts); !syncs || !ns.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if err := c.Update(ctx, asSyncWork(w, &ns)); err != nil {
		return false, fmt.Errorf("hand work %s/%s of namespace %s back to the namespace sync: %w", w.Namespace, w.Name, name, err)
	}
	return true, nil
}

// syncedNamespaceOf returns the name of the Namespace a binding's Work
// carries, when that is its only manifest and the Work has the name the
// namespace sync gives it; false for any other Work.
func syncedNamespaceOf(w *workv1.Work) (string, bool) {
	if shared.NamespaceWork(w) || !w.DeletionTimestamp.IsZero() || len(w.Spec.Workload.Manifests) != 1 {
		return "", false
	}
	objs, err := shared.Manifests(w)
	if err != nil {
		return "", false
	}
	ref := api.TemplateRefOf(objs[0])
	if ref.Group != "" || ref.Kind != shared.NamespaceKind.Kind || ref.Namespace != "" || shared.WorkName(ref) != w.Name {
		return "", false
	}
	return ref.Name, true
}

// asSyncWork is w relabelled as the namespace sync's Work of ns: the
// binding's keys go, the sync's come, the conflict resolution is the
// sync's (Abort) and nothing is suspended or preserved. The manifest stays
// until the sync renders its own.
func asSyncWork(w *workv1.Work, ns *corev1.Namespace) *workv1.Work {
	out := w.DeepCopy()
	out.Labels = maps.Clone(out.Labels)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for _, k := range bindingWorkLabels {
		delete(out.Labels, k)
	}
	for _, k := range bindingWorkAnnotations {
		delete(out.Annotations, k)
	}
	out.Labels[shared.LabelNamespaceSyncName] = ns.Name
	out.Labels[shared.LabelNamespaceSyncID] = string(ns.UID)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[shared.AnnotationConflictResolution] = string(api.ConflictAbort)
	out.Spec.SuspendDispatching = nil
	out.Spec.PreserveResourcesOnDeletion = nil
	return out
}
