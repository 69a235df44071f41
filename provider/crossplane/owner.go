package crossplane

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations the provider writes on the host objects it manages, and the
// field manager of its server-side applies.
const (
	// AnnotationOwner names the managed resource that owns a host object, as
	// "<Kind> <namespace>/<name>". An annotation rather than labels, because
	// resource names are longer than label values may be. A host object owned
	// by another managed resource is never taken over; one without the
	// annotation is adopted, as Crossplane imports existing resources.
	AnnotationOwner = "fleet.m.flotilla.io/owner"
	// AnnotationDesiredHash is the SHA-256 of the object the provider last
	// applied; a managed resource whose desired object hashes differently is
	// not up to date.
	AnnotationDesiredHash = "fleet.m.flotilla.io/desired-hash"
	// FieldManager is the server-side apply field manager of the provider.
	FieldManager = "flotilla-crossplane"
)

// ownerOf is the AnnotationOwner value of a managed resource.
func ownerOf(kind string, mg metav1.Object) string {
	return kind + " " + mg.GetNamespace() + "/" + mg.GetName()
}

// checkOwner refuses a host object that another managed resource owns.
func checkOwner(live metav1.Object, what, kind string, mg metav1.Object) error {
	owner, ok := live.GetAnnotations()[AnnotationOwner]
	if !ok || owner == ownerOf(kind, mg) {
		return nil
	}
	return fmt.Errorf("%s in the host is managed by %s, not by this %s: refusing to take it over", what, owner, kind)
}

// observeOnly reports whether the managed resource's management policies
// allow observing and nothing else.
func observeOnly(mg resource.Managed) bool {
	p := mg.GetManagementPolicies()
	return len(p) > 0 && !slices.ContainsFunc(p, func(a xpv2.ManagementAction) bool { return a != xpv2.ManagementActionObserve })
}

// stamp sets the owner annotation and then the desired hash over the rest
// of the object.
func stamp(obj *unstructured.Unstructured, kind string, mg metav1.Object) error {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationOwner] = ownerOf(kind, mg)
	delete(annotations, AnnotationDesiredHash)
	obj.SetAnnotations(annotations)
	hash, err := desiredHash(obj)
	if err != nil {
		return err
	}
	annotations[AnnotationDesiredHash] = hash
	obj.SetAnnotations(annotations)
	return nil
}

// desiredHash is the hex SHA-256 of the object's JSON (keys sorted by
// encoding/json) without AnnotationDesiredHash.
func desiredHash(obj *unstructured.Unstructured) (string, error) {
	view := obj
	if _, ok := obj.GetAnnotations()[AnnotationDesiredHash]; ok {
		view = obj.DeepCopy()
		annotations := view.GetAnnotations()
		delete(annotations, AnnotationDesiredHash)
		view.SetAnnotations(annotations)
	}
	b, err := json.Marshal(view.Object)
	if err != nil {
		return "", fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// toUnstructured converts a typed value (a spec) into its JSON map form.
func toUnstructured(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// apply server-side applies obj to the host with the provider's field
// manager, taking over fields from other managers.
func apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership)
}

func encodeBase64(b []byte) string {
	return base64.StdEncoding.EncodeToString(b)
}

// ownedOrGone applies the ownership rule to an observed host object. An
// Observe-only managed resource may read anything. Otherwise an object owned
// by another managed resource is refused, except while mg is being deleted:
// then it is reported as gone (done), so that mg can go without touching it.
func ownedOrGone(live metav1.Object, what, kind string, mg resource.Managed) (done bool, err error) {
	if observeOnly(mg) {
		return false, nil
	}
	err = checkOwner(live, what, kind, mg)
	if err != nil && meta.WasDeleted(mg) {
		return true, nil
	}
	return false, err
}

// externalName is the name of the host object: the external-name annotation,
// which crossplane-runtime sets to the managed resource's name before the
// first Observe, or that name.
func externalName(mg metav1.Object) string {
	if name := meta.GetExternalName(mg); name != "" {
		return name
	}
	return mg.GetName()
}
