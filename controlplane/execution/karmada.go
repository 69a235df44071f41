package execution

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// KarmadaAdoption lets an apply take over, without writing to the member,
// the object a stopped Karmada applied there for the same template. The
// operator grants it per template with `adopt-karmada`, naming the
// clusters whose object matched Karmada's Work when it looked.
//
// An object it covers carries karmada.io/managed=true and the permanent ID
// of the Karmada binding the adoption names; any other existing object is
// still a conflict. Such an object is flotilla's for this template: while
// applying the rendered object would change nothing in it (a server-side
// apply dry run says so), the apply is reported done and nothing is sent;
// once the template changes, the apply goes through as for any object of
// the fleet and puts flotilla's labels on it. Flotilla takes Karmada's
// place, so the object is not marked flotilla.io/adopted: removing the
// template deletes it, as Karmada would have.
type KarmadaAdoption struct {
	// BindingPermanentID is the resourcebinding.karmada.io/permanent-id
	// of the Karmada binding whose objects are taken over.
	BindingPermanentID string `json:"bindingPermanentID"`
	// ClusterBinding says the binding is a ClusterResourceBinding, whose
	// permanent ID Karmada writes under its own label key
	// (api.KarmadaLabelClusterBindingPermanentID).
	ClusterBinding bool `json:"clusterBinding,omitempty"`
	// Clusters are the clusters whose object is taken over.
	Clusters []string `json:"clusters"`
	// Label has the first apply put flotilla's labels on a covered object
	// even when its content would not change. Terraform sets it for an
	// object imported from Karmada: its refresh knows the resource's
	// objects by those labels alone, while the control plane keeps the
	// record and can afford to send nothing.
	Label bool `json:"label,omitempty"`
}

// covers reports whether live, in cluster, is an object Karmada applied
// for the binding a names.
func (a *KarmadaAdoption) covers(cluster string, live *unstructured.Unstructured) bool {
	if a == nil || a.BindingPermanentID == "" || !slices.Contains(a.Clusters, cluster) {
		return false
	}
	l := live.GetLabels()
	return l[api.KarmadaLabelManaged] == api.KarmadaValueManaged && l[a.BindingLabel()] == a.BindingPermanentID
}

// BindingLabel is the label key holding the permanent ID of a's binding
// on its Works and member objects.
func (a *KarmadaAdoption) BindingLabel() string {
	if a.ClusterBinding {
		return api.KarmadaLabelClusterBindingPermanentID
	}
	return api.KarmadaLabelBindingPermanentID
}

// appliesNothing reports whether applying obj onto live would leave live's
// content as it is: a server-side apply dry run (nothing is persisted,
// no watch event, no new resourceVersion) of obj without flotilla's own
// labels and annotations, compared with live apart from the field
// ownership the dry run records. The apiserver decides, with its defaults
// and merge rules, rather than a comparison written here.
func (c *clusterRun) appliesNothing(ctx context.Context, client dynamic.ResourceInterface, obj, live *unstructured.Unstructured) (bool, error) {
	bare := obj.DeepCopy()
	labels, annotations := bare.GetLabels(), bare.GetAnnotations()
	for _, k := range []string{render.LabelManagedBy, render.LabelFleet, render.LabelTemplateID} {
		delete(labels, k)
	}
	for _, k := range []string{render.AnnotationTemplate, render.AnnotationRenderedHash} {
		delete(annotations, k)
	}
	bare.SetLabels(labels)
	bare.SetAnnotations(annotations)
	// The template's own managed-by label, if it had one, is what the
	// member must keep: flotilla's render replaced it, so it is restored.
	if v, ok := live.GetLabels()[render.LabelManagedBy]; ok {
		labels[render.LabelManagedBy] = v
		bare.SetLabels(labels)
	}
	dry, err := client.Apply(ctx, live.GetName(), bare, metav1.ApplyOptions{FieldManager: c.e.fieldManager(), Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return false, fmt.Errorf("dry-run the apply over the object Karmada applied: %w", err)
	}
	return equality.Semantic.DeepEqual(withoutBookkeeping(dry), withoutBookkeeping(live)), nil
}

// withoutBookkeeping is obj without what a dry run changes even when the
// content stays: field ownership and the resourceVersion.
func withoutBookkeeping(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy()
	out.SetManagedFields(nil)
	out.SetResourceVersion("")
	return out.Object
}
