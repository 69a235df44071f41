package hoststore

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// LabelPolicy names, on a ResourceBinding, the policy that claimed its template.
const LabelPolicy = "propagationpolicy.flotilla.io/claimed-by"

// BindingName is the name of the ResourceBinding (or ClusterResourceBinding)
// of a template. For the core group it is Karmada's "<name>-<kind>"; for
// any other group the group follows, "<name>-<kind>.<group>", so that a
// Knative Service "web" and a core Service "web" (which Karmada's name
// would collide) have bindings of their own. As in Karmada, the name is
// lowercased and ':' (common in RBAC names, "system:aggregate-to-view")
// becomes '.', so it is a valid object name.
func BindingName(gk schema.GroupKind, name string) string {
	n := strings.ToLower(strings.ReplaceAll(name, ":", ".")) + "-" + strings.ToLower(gk.Kind)
	if gk.Group != "" {
		n += "." + gk.Group
	}
	return n
}

// GroupKindOf is the group and kind of a binding's resource.
func GroupKindOf(r api.ObjectReference) schema.GroupKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind()
}

// BindingRef names a binding in messages: "ResourceBinding ns/name", or
// "ClusterResourceBinding name" for one without a namespace.
func BindingRef(rb *workv1.ResourceBinding) string {
	if rb.Namespace == "" {
		return "ClusterResourceBinding " + rb.Name
	}
	return "ResourceBinding " + rb.Namespace + "/" + rb.Name
}
