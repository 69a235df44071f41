package mcs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// importTo writes the Works that give each consumer of a ServiceImport its
// derived Service and imported slices (shared.RenderImport), and deletes
// the import's Works nothing wants any more, then sets the import's
// status.clusters to the clusters whose endpoints it gets. An unchanged
// import writes nothing.
func (r *reconciler) importTo(ctx context.Context, rb *workv1.ResourceBinding) error {
	rendered, err := shared.RenderImport(ctx, r.client, rb, r.opts)
	if err != nil {
		return err
	}
	desired := map[client.ObjectKey]*workv1.Work{}
	var clusters []api.TargetCluster
	for _, cluster := range slices.Sorted(maps.Keys(rendered)) {
		clusters = append(clusters, api.TargetCluster{Name: cluster})
		for _, obj := range rendered[cluster] {
			w, err := shared.NewMCSWork(rb, cluster, obj)
			if err != nil {
				return err
			}
			desired[client.ObjectKeyFromObject(w)] = w
		}
	}
	if err := shared.EnsureExecutionSpaces(ctx, r.client, clusters); err != nil {
		return err
	}
	have, err := r.importWorks(ctx, rb.Namespace, rb.Spec.Resource.Name)
	if err != nil {
		return err
	}
	existing := map[client.ObjectKey]*workv1.Work{}
	for i := range have {
		w := &have[i]
		key := client.ObjectKeyFromObject(w)
		if _, ok := desired[key]; !ok || w.Labels[shared.LabelMCSImportUID] != string(rb.UID) {
			// A Work of an earlier import of the same name goes too.
			if err := r.deleteWork(ctx, w); err != nil {
				return err
			}
			continue
		}
		existing[key] = w
	}
	for _, key := range slices.SortedFunc(maps.Keys(desired), func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) }) {
		want := desired[key]
		if cur, ok := existing[key]; ok {
			if !cur.DeletionTimestamp.IsZero() || r.written.stale(cur) {
				// Created again once gone (its deletion brings the import
				// back); or the cache has not seen the last patch yet (its
				// event does).
				continue
			}
			if merged, changed := shared.MergeWork(cur, want); changed {
				if err := r.patchWork(ctx, cur, merged); err != nil {
					return err
				}
			}
			continue
		}
		err := r.client.Create(ctx, want)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Either the cache lagged (the Work's event brings the import
			// back) or the name is another Work's, which is never taken
			// over; the execution controller refuses the other one if it
			// claims to be this import's.
		case err != nil:
			return fmt.Errorf("create work %s: %w", key, err)
		}
	}
	return r.writeImportStatus(ctx, rb)
}

// writeImportStatus sets the ServiceImport's status.clusters to the
// clusters the host holds collected slices of its namespace and name from
// (multicluster.ImportStatusClusters), as a merge patch of the status
// alone; an unchanged list writes nothing.
func (r *reconciler) writeImportStatus(ctx context.Context, rb *workv1.ResourceBinding) error {
	tmpl, err := shared.ReadTemplate(ctx, r.client, rb)
	if err != nil || tmpl == nil {
		return err
	}
	collected, err := shared.CollectedSlices(ctx, r.client, tmpl.GetNamespace(), tmpl.GetName())
	if err != nil {
		return err
	}
	want := multicluster.ImportStatusClusters(collected)
	cur, _, _ := unstructured.NestedSlice(tmpl.Object, "status", "clusters")
	if len(cur) == len(want) && (len(want) == 0 || equality.Semantic.DeepEqual(cur, want)) {
		return nil
	}
	patched := tmpl.DeepCopy()
	if err := unstructured.SetNestedSlice(patched.Object, want, "status", "clusters"); err != nil {
		return fmt.Errorf("set clusters of ServiceImport %s/%s: %w", tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(tmpl)); err != nil {
		return fmt.Errorf("write status of ServiceImport %s/%s: %w", tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	return nil
}
