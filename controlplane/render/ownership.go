package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Labels and annotations flotilla stamps on every rendered object. The
// execution layer selects by the labels (labels cannot hold slashes, so the
// template is identified by a hash) and reads the annotations.
const (
	// LabelManagedBy is the well-known Kubernetes label naming the manager.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByFlotilla is the value of LabelManagedBy on flotilla's objects.
	ManagedByFlotilla = "flotilla"
	// LabelFleet holds the fleet (the provider's or control plane's name for
	// one set of clusters) the object was rendered for, so two fleets
	// sharing a member never prune each other's objects.
	LabelFleet = "flotilla.io/fleet"
	// LabelTemplateID holds api.TemplateRef.ID of the template the object was
	// rendered from.
	LabelTemplateID = "flotilla.io/template-id"
	// AnnotationTemplate holds api.TemplateRef.String of the template,
	// readable and parseable with api.ParseTemplateRef.
	AnnotationTemplate = "flotilla.io/template"
	// AnnotationRenderedHash holds RenderedHash of the object: a change means
	// flotilla rendered something different; a live object whose value
	// differs from the last rendered one was changed by someone else.
	AnnotationRenderedHash = "flotilla.io/rendered-hash"
)

// CanonicalJSON encodes an object with sorted keys and no insignificant
// whitespace, so equal objects give equal bytes.
func CanonicalJSON(obj *unstructured.Unstructured) ([]byte, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return b, nil
}

// RenderedHash is the hex SHA-256 of the canonical JSON of obj without its
// AnnotationRenderedHash, so a rendered object's hash can be checked
// against its own annotation.
func RenderedHash(obj *unstructured.Unstructured) (string, error) {
	view := obj
	if _, ok := obj.GetAnnotations()[AnnotationRenderedHash]; ok {
		view = obj.DeepCopy()
		annotations := view.GetAnnotations()
		delete(annotations, AnnotationRenderedHash)
		if len(annotations) == 0 {
			annotations = nil
		}
		view.SetAnnotations(annotations)
	}
	b, err := CanonicalJSON(view)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// stampOwnership sets the ownership labels and the template annotation, then
// the rendered hash over everything else. It runs after the overrides so no
// override can remove or forge them.
func stampOwnership(obj *unstructured.Unstructured, ref api.TemplateRef, fleet string) error {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelManagedBy] = ManagedByFlotilla
	labels[LabelFleet] = fleet
	labels[LabelTemplateID] = ref.ID()
	obj.SetLabels(labels)

	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationTemplate] = ref.String()
	delete(annotations, AnnotationRenderedHash)
	obj.SetAnnotations(annotations)

	hash, err := RenderedHash(obj)
	if err != nil {
		return err
	}
	annotations[AnnotationRenderedHash] = hash
	obj.SetAnnotations(annotations)
	return nil
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
