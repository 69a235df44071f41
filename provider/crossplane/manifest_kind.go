package crossplane

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindRefusal is the error of a template kind a Manifest may never apply.
// Nothing of a refused kind is ever written by a Manifest, so a refused
// Manifest that is being deleted has nothing to clean up.
type kindRefusal string

func (r kindRefusal) Error() string { return string(r) }

// refusedGroups are API groups whose objects steer flotilla, Crossplane or
// the host's authorization. A Manifest applies with the provider's identity,
// not its author's, so such an object would give whoever may write a
// Manifest in one namespace the provider's rights over the fleet: a
// ClusterPropagationPolicy claiming every Secret, a Cluster rewriting a
// member, a ResourceBinding naming another namespace's template, a Role
// granting the provider's rights. Flotilla's own kinds have managed
// resources of their own, which are checked for ownership field by field.
var refusedGroups = []struct {
	group, why string
}{
	{"flotilla.io", "flotilla's own API groups (*.flotilla.io) steer the control plane and the provider; use the Cluster, PropagationPolicy and OverridePolicy managed resources"},
	{"karmada.io", "Karmada's API groups (*.karmada.io) steer the control plane"},
	{"crossplane.io", "Crossplane's API groups (*.crossplane.io) would act with another provider's identity"},
	{"rbac.authorization.k8s.io", "RBAC kinds would grant the provider's rights to whoever writes the Manifest"},
}

// refusedKind says why a template of group kind gk may not be applied by a
// Manifest, or "" when it may. It decides by group and content only; the
// scope comes from the host (checkTemplateKind).
func refusedKind(gk schema.GroupKind, obj *unstructured.Unstructured) string {
	for _, r := range refusedGroups {
		if gk.Group == r.group || strings.HasSuffix(gk.Group, "."+r.group) {
			return r.why
		}
	}
	// A service-account-token Secret makes the host's token controller mint
	// a token for any service account of the namespace, and the control
	// plane would copy it to the members.
	if gk == (schema.GroupKind{Kind: "Secret"}) {
		if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
			return "spec.forProvider.manifest.type " + t + " asks the host for a service account's token"
		}
	}
	return ""
}

// checkTemplateKind refuses a template whose kind a Manifest may not apply:
// a refused group or content (refusedKind), or a kind that is not
// namespaced in the host. The scope comes from the host's RESTMapper, so a
// custom resource is judged as the host serves it; the apiserver would
// otherwise drop the namespace the Manifest forces and write the object
// cluster-wide.
func checkTemplateKind(mapper apimeta.RESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	name := gvk.Kind
	if gvk.Group != "" {
		name += "." + gvk.Group
	}
	if why := refusedKind(gvk.GroupKind(), obj); why != "" {
		return kindRefusal(fmt.Sprintf("spec.forProvider.manifest.kind: a Manifest may not apply %s: %s", name, why))
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case apimeta.IsNoMatchError(err):
		return kindRefusal(fmt.Sprintf("spec.forProvider.manifest: the host does not serve %s: %v", gvk, err))
	case err != nil:
		return fmt.Errorf("resolve spec.forProvider.manifest kind %s in the host: %w", gvk, err)
	case mapping.Scope.Name() != apimeta.RESTScopeNameNamespace:
		return kindRefusal(fmt.Sprintf("spec.forProvider.manifest.kind: %s is cluster-scoped in the host; a Manifest applies namespaced templates in its own namespace only", name))
	}
	return nil
}

// isKindRefusal reports whether err is a refusal of checkTemplateKind.
func isKindRefusal(err error) bool {
	var r kindRefusal
	return errors.As(err, &r)
}
