package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// AnnotationAdopted marks a member object that existed before flotilla
// adopted it (conflictResolution Overwrite). Pruning or deleting such an
// object releases it instead: flotilla gives back what it took over and
// deletes only what it created. The annotation counts only when the
// adoption field manager owns it (adopted): anyone may write the
// annotation itself, and templates used to carry it into their copies.
const AnnotationAdopted = "flotilla.io/adopted"

// ownershipLabels and ownershipAnnotations are what release removes.
var (
	ownershipLabels      = []string{render.LabelManagedBy, render.LabelFleet, render.LabelTemplateID}
	ownershipAnnotations = []string{render.AnnotationTemplate, render.AnnotationRenderedHash, AnnotationAdopted}
)

// adoptedPath is AnnotationAdopted's path in managedFields.
var adoptedPath = fieldpath.MakePathOrDie("metadata", "annotations", AnnotationAdopted)

// adoptionFieldManager writes the adopted marker. It is not the apply's
// field manager: the marker is not part of the rendered object, so the
// applies never remove it, and the managed view (what Terraform compares)
// never shows it. That it is a manager of its own is also what makes the
// marker flotilla's word: a rendered object is applied by the apply's
// manager and never carries the annotation (render strips flotilla's keys
// from templates), so a template cannot mark its copies adopted.
func (e *Executor) adoptionFieldManager() string {
	return e.fieldManager() + "-adoption"
}

// adopted reports whether flotilla adopted live: AnnotationAdopted is
// "true" and the adoption field manager owns it in managedFields. Only
// markAdopted writes it as that manager, when it takes over an object it
// did not create; an annotation written by anyone else, the apply's own
// manager included (a copy of a template that carried it), does not make
// a prune release the object instead of deleting it.
func (e *Executor) adopted(live *unstructured.Unstructured) bool {
	if live.GetAnnotations()[AnnotationAdopted] != "true" {
		return false
	}
	for _, entry := range live.GetManagedFields() {
		if entry.Manager != e.adoptionFieldManager() || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			continue
		}
		if set.Has(adoptedPath) {
			return true
		}
	}
	return false
}

// markAdopted sets AnnotationAdopted on a live object about to be adopted,
// as the adoption field manager, guarded by its resourceVersion: an object
// changed meanwhile fails the apply and is looked at again on the next
// one. It is a server-side apply, forced, rather than a merge patch: an
// object whose owner already wrote the annotation (with any value) must
// still end up with the adoption manager owning it, and an update that
// changes nothing records no owner.
func (c *clusterRun) markAdopted(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	if c.e.adopted(live) {
		return nil
	}
	metadata := map[string]any{
		"name":            live.GetName(),
		"resourceVersion": live.GetResourceVersion(),
		"annotations":     map[string]any{AnnotationAdopted: "true"},
	}
	if ns := live.GetNamespace(); ns != "" {
		metadata["namespace"] = ns
	}
	patch, err := json.Marshal(map[string]any{"apiVersion": live.GetAPIVersion(), "kind": live.GetKind(), "metadata": metadata})
	if err != nil {
		return fmt.Errorf("encode the adoption patch: %w", err)
	}
	force := true
	_, err = client.Patch(ctx, live.GetName(), types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: c.e.adoptionFieldManager(), Force: &force})
	return err
}

// remove prunes, deletes or releases one object. Only this fleet's object
// for this template is touched; anything else is left alone.
func (c *clusterRun) remove(ctx context.Context, o op) Outcome {
	out := Outcome{Cluster: c.name, Object: o.ref}
	fail := func(err error) Outcome {
		c.noteFailure(ctx, err)
		out.Action, out.Err = ActionFailed, c.wrap(o, err)
		return out
	}
	if down := c.downErr(); down != nil {
		return fail(notAttempted(down))
	}
	c.e.Applied.forget(c.name, o.ref)
	if o.ref.Group == "" && o.ref.Kind == "Namespace" {
		// Deleted, or about to be: applies into it must look again.
		c.e.Namespaces.forget(c.name, o.ref.Name)
	}
	client, err := c.resource(ctx, o.ref)
	if isNoKind(err) {
		out.Action, out.Reason = ActionAbsent, "the cluster does not serve the kind"
		return out
	}
	if err != nil {
		return fail(err)
	}
	live, err := client.Get(ctx, o.ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		out.Action, out.Reason = ActionAbsent, "the object does not exist"
		return out
	}
	if err != nil {
		return fail(fmt.Errorf("read the live object: %w", err))
	}
	// A taken-over Karmada object is the template's before flotilla's
	// first write labels it (KarmadaAdoption).
	if ownerOf(live, c.e.Fleet, o.ref) != ownedByTemplate && !o.karmada.covers(c.name, live) {
		out.Action = ActionSkipped
		out.Reason = fmt.Sprintf("not managed by flotilla fleet %q for template %s; left alone", c.e.Fleet, o.ref)
		return out
	}
	out.Hash = live.GetAnnotations()[render.AnnotationRenderedHash]
	if o.preserve || c.e.adopted(live) {
		released, err := c.release(ctx, client, live)
		if apierrors.IsNotFound(err) {
			out.Action, out.Reason = ActionAbsent, "the object was deleted meanwhile"
			return out
		}
		if err != nil {
			return fail(fmt.Errorf("release: %w", err))
		}
		out.Action, out.ResourceVersion, out.Generation = ActionReleased, released.GetResourceVersion(), released.GetGeneration()
		return out
	}
	// The UID precondition keeps a delete from reaching an object that was
	// deleted and created again (by someone else) since the read.
	uid := live.GetUID()
	background := metav1.DeletePropagationBackground
	err = client.Delete(ctx, o.ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
	switch {
	case apierrors.IsNotFound(err):
		out.Action, out.Reason = ActionAbsent, "the object was deleted meanwhile"
	case err != nil:
		return fail(err)
	default:
		out.Action = ActionPruned
		if phaseOf(o.ref) == phaseCRD {
			c.crdChanged.Store(true)
		}
	}
	return out
}

// release removes flotilla's ownership labels and annotations and its
// entries in managedFields, and leaves the object otherwise as it is: the
// object is released, not deleted. Dropping the field ownership too means
// whoever manages the object next (kubectl apply --server-side, another
// tool) does not conflict with a manager that is gone.
//
// This is a JSON merge patch rather than an apply: an apply can only
// remove fields by no longer declaring them, which would remove the whole
// spec along with the labels. The resourceVersion in the patch makes it a
// compare-and-swap; a conflict reads the object again and retries.
func (c *clusterRun) release(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var released *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := releasePatch(live, c.e.fieldManager(), c.e.adoptionFieldManager())
		if err != nil {
			return err
		}
		released, err = client.Patch(ctx, live.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.e.fieldManager()})
		if apierrors.IsConflict(err) {
			if fresh, getErr := client.Get(ctx, live.GetName(), metav1.GetOptions{}); getErr == nil {
				live = fresh
			}
		}
		return err
	})
	return released, err
}

// releasePatch builds the merge patch for release. A merge patch replaces
// a list whole, so managedFields is sent without flotilla's entries; an
// empty list would be ignored by the apiserver, so "[{}]" (its documented
// way to clear every entry) is sent when flotilla was the only manager.
func releasePatch(live *unstructured.Unstructured, fieldManagers ...string) ([]byte, error) {
	metadata := map[string]any{"resourceVersion": live.GetResourceVersion()}
	labels := map[string]any{}
	for _, k := range ownershipLabels {
		if _, ok := live.GetLabels()[k]; ok {
			labels[k] = nil
		}
	}
	if len(labels) > 0 {
		metadata["labels"] = labels
	}
	annotations := map[string]any{}
	for _, k := range ownershipAnnotations {
		if _, ok := live.GetAnnotations()[k]; ok {
			annotations[k] = nil
		}
	}
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	kept := []any{}
	for _, entry := range live.GetManagedFields() {
		if slices.Contains(fieldManagers, entry.Manager) {
			continue
		}
		kept = append(kept, entry)
	}
	if len(kept) == 0 {
		kept = []any{map[string]any{}}
	}
	metadata["managedFields"] = kept
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encode the release patch: %w", err)
	}
	return patch, nil
}
