package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// LabelTemplateID holds TemplateRef.ID of the template the object was
	// rendered from.
	LabelTemplateID = "flotilla.io/template-id"
	// AnnotationTemplate holds TemplateRef.String of the template, readable
	// and parseable with ParseTemplateRef.
	AnnotationTemplate = "flotilla.io/template"
	// AnnotationRenderedHash holds RenderedHash of the object: a change means
	// flotilla rendered something different; a live object whose value
	// differs from the last rendered one was changed by someone else.
	AnnotationRenderedHash = "flotilla.io/rendered-hash"
)

// templateIDLength is how many hex characters of the SHA-256 TemplateRef.ID
// keeps: 64 bits, far from colliding within one fleet and short to read.
const templateIDLength = 16

// TemplateRef identifies a resource template.
type TemplateRef struct {
	// Group is the API group; empty for the core group.
	Group string
	// Version is the API version.
	Version string
	// Kind is the object kind.
	Kind string
	// Namespace is empty for a cluster-scoped object.
	Namespace string
	// Name is the object name.
	Name string
}

// TemplateRefOf returns the identity of obj.
func TemplateRefOf(obj *unstructured.Unstructured) TemplateRef {
	gvk := obj.GroupVersionKind()
	return TemplateRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String formats the reference as
// "<apiVersion>, Kind=<kind>, <namespace>/<name>", e.g.
// "apps/v1, Kind=Deployment, default/web". The apiVersion is written as in
// a manifest ("v1" for the core group) and a cluster-scoped object has just
// "<name>". Object names cannot contain ", " or "/", so the form parses back
// without ambiguity.
func (r TemplateRef) String() string {
	apiVersion := schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
	object := r.Name
	if r.Namespace != "" {
		object = r.Namespace + "/" + r.Name
	}
	return apiVersion + ", Kind=" + r.Kind + ", " + object
}

// ParseTemplateRef parses the String form, as found in AnnotationTemplate.
func ParseTemplateRef(s string) (TemplateRef, error) {
	parts := strings.Split(s, ", ")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "Kind=") {
		return TemplateRef{}, fmt.Errorf("parse template reference %q: want \"<apiVersion>, Kind=<kind>, [<namespace>/]<name>\"", s)
	}
	gv, err := schema.ParseGroupVersion(parts[0])
	if err != nil || gv.Version == "" {
		return TemplateRef{}, fmt.Errorf("parse template reference %q: bad apiVersion %q", s, parts[0])
	}
	ref := TemplateRef{Group: gv.Group, Version: gv.Version, Kind: strings.TrimPrefix(parts[1], "Kind=")}
	if ns, name, ok := strings.Cut(parts[2], "/"); ok {
		ref.Namespace, ref.Name = ns, name
	} else {
		ref.Name = parts[2]
	}
	if ref.Kind == "" || ref.Name == "" || strings.Contains(ref.Name, "/") || (ref.Namespace == "" && strings.Contains(parts[2], "/")) {
		return TemplateRef{}, fmt.Errorf("parse template reference %q: kind and name must be set and the object must be <name> or <namespace>/<name>", s)
	}
	return ref, nil
}

// ID is a short stable hash of group, kind, namespace and name, fit for a
// label value. The version is left out so moving a template to a new API
// version keeps its identity, and so its objects in the members.
func (r TemplateRef) ID() string {
	sum := sha256.Sum256([]byte(r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name))
	return hex.EncodeToString(sum[:])[:templateIDLength]
}

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
func stampOwnership(obj *unstructured.Unstructured, ref TemplateRef, fleet string) error {
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
