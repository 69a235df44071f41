package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// ReservedDomain is flotilla's label and annotation domain. Every key in it
// or in one of flotilla's own subdomains of it (reservedSubdomains:
// flotilla.io/adopted, resourcebinding.flotilla.io/permanent-id, …) is
// flotilla's own: what the execution layer, the controllers and the front
// ends read to decide what they own, adopted or may delete.
const ReservedDomain = "flotilla.io"

// reservedSubdomains are the subdomains of ReservedDomain that prefix
// flotilla's keys: one per API group and per controller that keeps state in
// labels or annotations. Other subdomains are not flotilla's: a user's own
// group may sit under it (the Crossplane examples label their copies
// apps.example.flotilla.io/cluster), and those keys must reach members.
// TestReservedCoversEveryKey keeps this list in step with the keys the code
// uses.
var reservedSubdomains = []string{
	"cluster", "clusterpropagationpolicy", "clusterresourcebinding", "config", "failover", "federatedresourcequota", "fleet.m", "mcs",
	"namespace", "overridepolicy", "policy", "propagationpolicy", "resourcebinding", "resourcetemplate",
	"rollout", "work",
}

// annotationRolloutResume is the controller's AnnotationRolloutResume, a
// user's request written on the template rather than a key of flotilla's.
const annotationRolloutResume = "rollout.flotilla.io/resume"

// Reserved reports whether a label or annotation key is flotilla's own:
// its prefix is ReservedDomain or a subdomain of it, or it is
// LabelManagedBy. A rendered object never carries such a key from its
// template, an override or a failover's preserved labels: stampOwnership
// removes them, so a template cannot mark its copies adopted, claim
// another template's objects or pose as another fleet's.
func Reserved(key string) bool {
	switch key {
	case LabelManagedBy:
		return true
	case annotationRolloutResume:
		// A user's request on the template, kept as before: a resume
		// rewrites the halted stage's Works, which the staged rollout's
		// resume relies on.
		return false
	}
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	if prefix == ReservedDomain {
		return true
	}
	sub, ok := strings.CutSuffix(prefix, "."+ReservedDomain)
	return ok && slices.Contains(reservedSubdomains, sub)
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

// stampOwnership removes every Reserved label and annotation the object
// came with, sets the ownership labels and the template annotation, then
// the rendered hash over everything else. It runs after the overrides and
// the preserved labels, so none of them can remove or forge flotilla's
// keys.
func stampOwnership(obj *unstructured.Unstructured, ref api.TemplateRef, fleet string) error {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k := range labels {
		if Reserved(k) {
			delete(labels, k)
		}
	}
	labels[LabelManagedBy] = ManagedByFlotilla
	labels[LabelFleet] = fleet
	labels[LabelTemplateID] = ref.ID()
	obj.SetLabels(labels)

	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k := range annotations {
		if Reserved(k) {
			delete(annotations, k)
		}
	}
	annotations[AnnotationTemplate] = ref.String()
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

// AppliedFieldsDigest is FieldSetDigest of the field set that manager
// owns by server-side apply in an object's managed fields (the main
// resource's, not a subresource's), or "" when it owns none. Any write by
// someone else to a field manager applied (kubectl edit, another apply,
// a removal) takes the field out of that set, and status writes land in a
// subresource's entry, so the digest stays the same exactly as long as
// nobody touched what flotilla applied.
func AppliedFieldsDigest(entries []metav1.ManagedFieldsEntry, manager string) string {
	if f := AppliedEntry(entries, manager); f != nil {
		return FieldSetDigest(f.FieldsV1)
	}
	return ""
}

// AppliedEntry is manager's server-side apply entry of the main resource
// in entries, or nil.
func AppliedEntry(entries []metav1.ManagedFieldsEntry, manager string) *metav1.ManagedFieldsEntry {
	for i, f := range entries {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == "" && f.FieldsV1 != nil {
			return &entries[i]
		}
	}
	return nil
}

// FieldSetDigest is the SHA-256 (hex) of a managed-fields field set, over
// its JSON with sorted keys: the same set reads as different bytes from a
// typed metadata watch (the server's order) and from an unstructured
// object (re-encoded with sorted keys).
func FieldSetDigest(f *metav1.FieldsV1) string {
	if f == nil {
		return ""
	}
	raw := f.GetRawBytes()
	var set map[string]any
	if json.Unmarshal(raw, &set) == nil {
		if sorted, err := json.Marshal(set); err == nil {
			raw = sorted
		}
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
