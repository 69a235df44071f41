package terraform

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// policyKind describes one of the four policy resources. The namespaced and
// cluster-wide forms are separate resource types, as they are separate kinds
// in Karmada, and share everything but the namespace.
type policyKind struct {
	// kind is the Karmada kind and the value of the `kind` attribute.
	kind string
	// typeName is the resource type name after the provider's "flotilla_".
	typeName string
	// namespaced policies have a required `namespace` attribute.
	namespaced bool
	// propagation is true for the propagation kinds (api.PropagationSpec),
	// false for the override kinds (api.OverrideSpec).
	propagation bool
	// noun names the kind in messages, for example "propagation policy".
	noun string
}

var (
	propagationPolicyKind        = policyKind{api.KindPropagationPolicy, "propagation_policy", true, true, "propagation policy"}
	clusterPropagationPolicyKind = policyKind{api.KindClusterPropagationPolicy, "cluster_propagation_policy", false, true, "cluster propagation policy"}
	overridePolicyKind           = policyKind{api.KindOverridePolicy, "override_policy", true, false, "override policy"}
	clusterOverridePolicyKind    = policyKind{api.KindClusterOverridePolicy, "cluster_override_policy", false, false, "cluster override policy"}
)

// policyKindOf returns the policy kind with Karmada kind name kind.
func policyKindOf(kind string) (policyKind, bool) {
	for _, k := range []policyKind{propagationPolicyKind, clusterPropagationPolicyKind, overridePolicyKind, clusterOverridePolicyKind} {
		if k.kind == kind {
			return k, true
		}
	}
	return policyKind{}, false
}

// Attribute names every policy resource has besides its spec fields.
const (
	attrName      = "name"
	attrNamespace = "namespace"
	attrKind      = "kind"
	attrID        = "id"
)

// Derived once: the attribute trees of the two spec types. A type the
// generator cannot handle is a programming error that every test hits.
var (
	propagationFields = sync.OnceValue(func() []*specField { return mustSpecFields(reflect.TypeFor[api.PropagationSpec]()) })
	overrideFields    = sync.OnceValue(func() []*specField { return mustSpecFields(reflect.TypeFor[api.OverrideSpec]()) })
)

func mustSpecFields(t reflect.Type) []*specField {
	fields, err := specFields(t)
	if err != nil {
		panic(fmt.Sprintf("derive the attributes of %s: %v", t, err))
	}
	return fields
}

// fields are the spec attributes of the kind.
func (k policyKind) fields() []*specField {
	if k.propagation {
		return propagationFields()
	}
	return overrideFields()
}

// specTypeName is the Go spec type's name, the prefix of its skippedFields keys.
func (k policyKind) specTypeName() string {
	if k.propagation {
		return reflect.TypeFor[api.PropagationSpec]().Name()
	}
	return reflect.TypeFor[api.OverrideSpec]().Name()
}

// id is the resource id: "namespace/name", or "name" for a cluster-wide policy.
func (k policyKind) id(namespace, name string) string {
	if k.namespaced {
		return namespace + "/" + name
	}
	return name
}

// skippedMarkdown lists the kind's skipped Karmada fields and why, for the docs.
func (k policyKind) skippedMarkdown() string {
	paths := map[string]string{}
	var keys []string
	for key := range skippedFields {
		if p, ok := skippedSpecPath(key, k.specTypeName()); ok {
			paths[p] = key
			keys = append(keys, p)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, p := range keys {
		fmt.Fprintf(&b, "- `spec.%s`: %s.\n", p, skippedFields[paths[p]].reason)
	}
	return b.String()
}

// markdownDescription is the resource's documentation: what it is, the
// design decisions, and the Karmada fields it leaves out.
func (k policyKind) markdownDescription() string {
	// Per kind: what it is, how a manifest uses it, and what is validated.
	what := "A Karmada " + k.kind + ": per-cluster changes to the templates it selects."
	use := "override_policies"
	applies := "every override policy that selects a template changes it, cluster-wide ones first, in Karmada's order"
	checks := "JSON pointers, operators, `json` or `yaml` but not both, label keys"
	if k.propagation {
		what = "A Karmada " + k.kind + ": which clusters receive the templates it selects, and how replicas are divided."
		use = "propagation_policies"
		applies = "flotilla picks the one policy that claims each template the way Karmada does"
		checks = "exclusive affinities, spread constraints, `max_groups` against `min_groups`, weights, selectors"
	}
	scope := "It selects templates in its own `namespace`."
	other := "`flotilla_cluster_" + k.typeName + "` is the cluster-wide form."
	if !k.namespaced {
		scope = "It is cluster-wide: it may select cluster-scoped templates and templates in any namespace, and a " +
			"namespaced policy that selects the same template wins over it."
		other = "`flotilla_" + strings.TrimPrefix(k.typeName, "cluster_") + "` is the namespaced form."
	}
	return what + " " + scope + "\n\n" +
		"The policy is a validated value, not a remote object: creating it touches no cluster. A `flotilla_manifest` " +
		"takes it by reference (`" + use + " = [flotilla_" + k.typeName + ".example]`), and " + applies + ".\n\n" +
		"Attributes are Karmada's `spec` fields in snake_case (`resourceSelectors` is `resource_selectors`), so a " +
		"Karmada " + k.kind + " reads field for field. The configuration is validated with Karmada's own rules (" +
		checks + ", ...) and every problem names its attribute. The namespaced and cluster-wide forms are separate " +
		"resource types, as they are separate kinds in Karmada; " + other + "\n\n" +
		"There are no `labels`: Karmada never selects policies by label, so they would be stored and never read. " +
		"These Karmada fields have no attribute either:\n\n" + k.skippedMarkdown()
}
