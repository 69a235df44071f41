package mcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// reconciler collects the endpoints of ServiceExports and writes the Works
// of ServiceImports.
type reconciler struct {
	client   client.Client
	members  *shared.Members
	opts     shared.Options
	interval time.Duration
	events   shared.Recorder
	notes    notes
	written  writtenWorks
}

// writtenWorks remembers the generation each Work had after this
// controller's last patch of it, until the cache shows it. A ServiceImport
// with several consumers patches one Work per consumer in one reconcile;
// the first Work's event wakes the import again while the cache may still
// hold the others as they were, and acting on those would send each of
// them once more (before patches, an update that was refused with 409).
type writtenWorks struct {
	mu  sync.Mutex
	gen map[client.ObjectKey]int64
}

// stale reports whether the cache's cur is older than this controller's
// last patch of it: its own event brings the key back once it is not.
func (w *writtenWorks) stale(cur *workv1.Work) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(cur)
	g, ok := w.gen[key]
	if ok && cur.Generation >= g {
		delete(w.gen, key)
		return false
	}
	return ok
}

// record remembers the generation of a Work the server returned after a
// patch.
func (w *writtenWorks) record(done *workv1.Work) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gen == nil {
		w.gen = map[client.ObjectKey]int64{}
	}
	w.gen[client.ObjectKeyFromObject(done)] = done.Generation
}

// forget drops what is remembered of a Work (deleted).
func (w *writtenWorks) forget(key client.ObjectKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.gen, key)
}

// Reconcile brings one Service's collected slices (keyed by its
// ServiceExport's binding name, whether or not the export exists), one
// ServiceImport's Works or one MultiClusterService's Works to what the
// fleet shows now. A source that is gone, being deleted or refused leaves
// nothing flotilla made for it.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kind, name, ok := kindOfBinding(req.Name)
	if !ok {
		return reconcile.Result{}, nil
	}
	// Low priority, as the Works' resync: a key that changed goes first.
	resync := reconcile.Result{RequeueAfter: r.interval, Priority: ptr.To(handler.LowPriority)}
	switch kind {
	case multicluster.KindServiceExport:
		// The Service's collection, for its ServiceExport and its
		// MultiClusterService alike.
		active, err := r.collect(ctx, req.Namespace, name)
		switch {
		case err != nil && !errors.Is(err, shared.ErrPending):
			return reconcile.Result{}, err
		case !active:
			r.notes.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return resync, nil
	case api.KindMultiClusterService:
		active, err := r.crossCluster(ctx, req.Namespace, name)
		if err != nil || !active {
			return reconcile.Result{}, err
		}
		return resync, nil
	}
	var rb workv1.ResourceBinding
	err := r.client.Get(ctx, req.NamespacedName, &rb)
	switch {
	case shared.IsNotFound(err):
		r.notes.forget(req.NamespacedName)
		return reconcile.Result{}, r.cleanup(ctx, kind, req.Namespace, name)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("read binding %s: %w", req.NamespacedName, err)
	case !rb.DeletionTimestamp.IsZero() || rb.Spec.Resource.Name != name:
		return reconcile.Result{}, r.cleanup(ctx, kind, req.Namespace, name)
	}
	if err = r.importTo(ctx, &rb); err == nil {
		r.notes.forget(req.NamespacedName) // a refusal fixed is reported again if it recurs
	}
	switch {
	case errors.Is(err, shared.ErrPending):
	case shared.IsRefused(err):
		// Nothing is imported for a refused binding.
		r.refused(&rb, err)
		if err := r.cleanup(ctx, kind, rb.Namespace, name); err != nil {
			return reconcile.Result{}, err
		}
	case err != nil:
		return reconcile.Result{}, err
	}
	return resync, nil
}

// cleanup removes what flotilla made for the ServiceExport or
// ServiceImport namespace/name: the collected slices, or the import Works
// (whose removal takes the derived Service and slices out of the
// consumers).
func (r *reconciler) cleanup(ctx context.Context, kind, namespace, name string) error {
	if kind == multicluster.KindServiceExport {
		metrics.MCSExportedEndpoints.DeleteLabelValues(namespace, name)
		have, err := shared.CollectedSlices(ctx, r.client, namespace, name)
		if err != nil {
			return err
		}
		for i := range have {
			if err := r.client.Delete(ctx, &have[i]); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete collected endpoint slice %s/%s: %w", have[i].Namespace, have[i].Name, err)
			}
		}
		return nil
	}
	works, err := r.importWorks(ctx, namespace, name)
	if err != nil {
		return err
	}
	for i := range works {
		if err := r.deleteWork(ctx, &works[i]); err != nil {
			return err
		}
	}
	return nil
}

// importWorks lists the Works of the ServiceImport namespace/name.
func (r *reconciler) importWorks(ctx context.Context, namespace, name string) ([]workv1.Work, error) {
	var list workv1.WorkList
	if err := r.client.List(ctx, &list, client.MatchingLabels{shared.LabelMCSImportNamespace: namespace, shared.LabelMCSImportName: name}); err != nil {
		return nil, fmt.Errorf("list works of ServiceImport %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}

// patchWork writes what MergeWork changed of the Work cur (its spec,
// labels, annotations, finalizers) as a JSON merge patch of those fields
// alone, without cur's resourceVersion: the execution and work status
// controllers patch the same Work's status after each apply, and an
// update of the whole object read from the cache before one of those
// patches was refused with 409 and retried (3 of 15 endpoint changes in
// BenchmarkMCSSync). The Work's status is a subresource, so the patch
// never touches it, and every field it sets is this controller's alone.
// The UID goes with it as a precondition: a Work deleted and made again
// under the same name (by anyone) is not patched as if it were cur.
func (r *reconciler) patchWork(ctx context.Context, cur, merged *workv1.Work) error {
	data, err := client.MergeFrom(cur).Data(merged)
	if err != nil {
		return fmt.Errorf("diff work %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return fmt.Errorf("diff work %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	md, _ := patch["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["uid"] = string(cur.UID)
	patch["metadata"] = md
	if data, err = json.Marshal(patch); err != nil {
		return fmt.Errorf("encode patch of work %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	if err := r.client.Patch(ctx, merged, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("patch work %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	r.written.record(merged) // the server's answer
	return nil
}

func (r *reconciler) deleteWork(ctx context.Context, w *workv1.Work) error {
	if !w.DeletionTimestamp.IsZero() {
		return nil
	}
	r.written.forget(client.ObjectKeyFromObject(w))
	if err := r.client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}
