package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// templateIDLength is how many hex characters of the SHA-256 TemplateRef.ID
// keeps: 64 bits, far from colliding within one fleet and short to read.
const templateIDLength = 16

// TemplateRef identifies a resource template: the one Go type for "which
// template" in rendering, planning, execution, the controllers and the front
// ends. It is comparable, so it keys maps.
//
// ObjectReference stays the wire form of the same identity in a binding's
// spec.resource, as in Karmada; it also carries the template's UID and
// resourceVersion, which say which incarnation of the template a binding
// saw, not which template it is. TemplateRefOfResource and
// TemplateRef.Resource convert between the two.
//
// +kubebuilder:object:generate=false
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

// TemplateRefOfResource returns the identity of a binding's spec.resource.
func TemplateRefOfResource(r ObjectReference) TemplateRef {
	gvk := schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	return TemplateRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: r.Namespace, Name: r.Name}
}

// APIVersion is the apiVersion as written in a manifest ("v1" for the core
// group).
func (r TemplateRef) APIVersion() string {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
}

// Resource is r in the wire form of a binding's spec.resource, without a
// UID or resourceVersion.
func (r TemplateRef) Resource() ObjectReference {
	return ObjectReference{APIVersion: r.APIVersion(), Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// String formats the reference as
// "<apiVersion>, Kind=<kind>, <namespace>/<name>", e.g.
// "apps/v1, Kind=Deployment, default/web". The apiVersion is written as in
// a manifest ("v1" for the core group) and a cluster-scoped object has just
// "<name>". Object names cannot contain ", " or "/", so the form parses back
// without ambiguity. This is the form of the flotilla.io/template annotation
// and of the Terraform manifest's id; messages use Describe.
func (r TemplateRef) String() string {
	return r.APIVersion() + ", Kind=" + r.Kind + ", " + r.object()
}

// Describe names the template in messages: "Deployment default/web", or
// "Namespace prod" for a cluster-scoped one.
func (r TemplateRef) Describe() string {
	return r.Kind + " " + r.object()
}

// object is "<namespace>/<name>", or "<name>" when cluster-scoped.
func (r TemplateRef) object() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// ParseTemplateRef parses the String form, as found in the
// flotilla.io/template annotation.
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

// SameTemplate reports whether r and o are the same template, ignoring the
// version as ID does.
func (r TemplateRef) SameTemplate(o TemplateRef) bool {
	return r.Group == o.Group && r.Kind == o.Kind && r.Namespace == o.Namespace && r.Name == o.Name
}
