package mcs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// importTo writes the Works that give each consumer of a ServiceImport its
// derived Service and imported slices (shared.RenderImport), and deletes
// the import's Works nothing wants any more. An unchanged import writes
// nothing.
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
			if !cur.DeletionTimestamp.IsZero() {
				continue // created again once gone; its deletion brings the import back
			}
			if merged, changed := shared.MergeWork(cur, want); changed {
				if err := r.client.Update(ctx, merged); err != nil {
					return fmt.Errorf("update work %s: %w", key, err)
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
	return nil
}
