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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// by another managed resource is never taken over; whether one without
	// an owner may be adopted depends on the kind (see checkOwner).
	AnnotationOwner = "fleet.m.flotilla.io/owner"
	// AnnotationOwnerUID is the UID of the managed resource AnnotationOwner
	// names. A managed resource owns a host object only when both match, so
	// a namesake created after the owner was deleted with deletionPolicy
	// Orphan does not inherit what the first one left behind.
	AnnotationOwnerUID = "fleet.m.flotilla.io/owner-uid"
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

// ownership is how a host object relates to a managed resource.
type ownership int

const (
	// unowned: no managed resource has claimed the object, or one claimed it
	// by name without the UID that would prove it.
	unowned ownership = iota
	ownedBySelf
	ownedByOther
)

// ownershipOf classifies live for the managed resource mg of kind.
func ownershipOf(live metav1.Object, kind string, mg metav1.Object) ownership {
	annotations := live.GetAnnotations()
	owner, ok := annotations[AnnotationOwner]
	uid, hasUID := annotations[AnnotationOwnerUID]
	switch {
	case !ok:
		return unowned
	case owner != ownerOf(kind, mg):
		return ownedByOther
	case !hasUID:
		return unowned
	case uid != string(mg.GetUID()):
		return ownedByOther
	default:
		return ownedBySelf
	}
}

// checkOwner refuses a host object that another managed resource owns and,
// unless refuseUnowned is nil, one that no managed resource owns;
// refuseUnowned then says why and what to do instead.
func checkOwner(live metav1.Object, what, kind string, mg metav1.Object, refuseUnowned error) error {
	switch ownershipOf(live, kind, mg) {
	case ownedByOther:
		owner := live.GetAnnotations()[AnnotationOwner]
		if owner == ownerOf(kind, mg) {
			owner += " (UID " + live.GetAnnotations()[AnnotationOwnerUID] + ", an earlier resource of this name)"
		}
		return fmt.Errorf("%s in the host is managed by %s, not by this %s: refusing to take it over", what, owner, kind)
	case unowned:
		if refuseUnowned != nil {
			return fmt.Errorf("%s already exists in the host and this %s %s/%s does not own it: %w", what, kind, mg.GetNamespace(), mg.GetName(), refuseUnowned)
		}
	}
	return nil
}

// observeOnly reports whether the managed resource's management policies
// allow observing and nothing else.
func observeOnly(mg resource.Managed) bool {
	p := mg.GetManagementPolicies()
	return len(p) > 0 && !slices.ContainsFunc(p, func(a xpv2.ManagementAction) bool { return a != xpv2.ManagementActionObserve })
}

// stamp sets the owner annotations and then the desired hash over the rest
// of the object.
func stamp(obj *unstructured.Unstructured, kind string, mg metav1.Object) error {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationOwner] = ownerOf(kind, mg)
	annotations[AnnotationOwnerUID] = string(mg.GetUID())
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
// by another managed resource is refused, and one owned by none is refused
// with refuseUnowned unless that is nil (see checkOwner). While mg is being
// deleted, an object it does not own is reported as gone (done), so that mg
// can go without touching it.
func ownedOrGone(live metav1.Object, what, kind string, mg resource.Managed, refuseUnowned error) (done bool, err error) {
	if observeOnly(mg) {
		return false, nil
	}
	if meta.WasDeleted(mg) && ownershipOf(live, kind, mg) != ownedBySelf {
		return true, nil
	}
	return false, checkOwner(live, what, kind, mg, refuseUnowned)
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

// deleteOwned deletes the host object key, read into live (whose kind is
// set), if mg owns it, and leaves anything else alone: an object another
// managed resource or an administrator owns is not mg's to delete, even
// when mg's name points at it. The UID precondition keeps a replacement
// created since the read from being deleted in its place.
func deleteOwned(ctx context.Context, c client.Client, key client.ObjectKey, live client.Object, what, kind string, mg metav1.Object) error {
	switch err := c.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read %s in the host: %w", what, err)
	}
	if ownershipOf(live, kind, mg) != ownedBySelf {
		return nil
	}
	uid := live.GetUID()
	err := c.Delete(ctx, live, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %s from the host: %w", what, err)
	}
	return nil
}
