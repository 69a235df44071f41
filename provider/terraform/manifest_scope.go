package terraform

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
)

// An object's scope (namespaced or cluster-scoped) decides its namespace
// and so its id. It is decided once, when Terraform plans a new identity,
// and recorded in the id; every later call (apply, refresh, destroy) takes
// the namespace from the recorded id and never asks again, so the id
// cannot change between plan and apply. The decision, in order:
//  1. a built-in kind: the stock kube-apiserver's scope;
//  2. a CustomResourceDefinition for the kind in the same resource's
//     dependencies: its spec.scope;
//  3. otherwise the members' discovery (their RESTMappers), which must
//     agree; a kind no member serves is refused unless the manifest names
//     a namespace.

// staticScope decides a kind's scope without a member: from the built-in
// kinds and the CustomResourceDefinitions among objects. decided is false
// when only the members' discovery can tell.
func staticScope(gk schema.GroupKind, objects []*unstructured.Unstructured) (clusterScoped, decided bool) {
	if api.IsClusterScopedBuiltin(gk) {
		return true, true
	}
	for _, o := range objects {
		if o == nil || o.GetKind() != "CustomResourceDefinition" || o.GroupVersionKind().Group != "apiextensions.k8s.io" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if group == gk.Group && kind == gk.Kind {
			scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
			return scope == "Cluster", true
		}
	}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.GroupKind() == gk {
			return false, true
		}
	}
	return false, false
}

// discoveredScope is one member's answer for a kind: served says whether
// the member knows the kind at all; err is set when it could not be asked.
type discoveredScope struct {
	served, clusterScoped bool
	err                   error
}

// decideDiscovered combines the members' answers (cluster → answer). It
// fails, naming the clusters, when they disagree, or when no member serves
// the kind and namespaced is false (the manifest names no namespace, so
// the object's identity cannot be known).
func decideDiscovered(gk schema.GroupKind, answers map[string]discoveredScope, namespaced bool) (clusterScoped bool, err error) {
	var cluster, names, unknown []string
	var failed []string
	for name, a := range answers {
		switch {
		case a.err != nil:
			failed = append(failed, fmt.Sprintf("%s (%v)", name, a.err))
		case !a.served:
			unknown = append(unknown, name)
		case a.clusterScoped:
			cluster = append(cluster, name)
		default:
			names = append(names, name)
		}
	}
	for _, s := range [][]string{cluster, names, unknown, failed} {
		sort.Strings(s)
	}
	switch {
	case len(cluster) > 0 && len(names) > 0:
		return false, fmt.Errorf("the members disagree on the scope of %s: cluster-scoped in %s, namespaced in %s",
			gk, strings.Join(cluster, ", "), strings.Join(names, ", "))
	case len(cluster) > 0:
		return true, nil
	case len(names) > 0 || namespaced:
		return false, nil
	}
	msg := fmt.Sprintf("no member serves %s, so its scope is unknown", gk)
	if len(unknown) > 0 {
		msg += "; not served by " + strings.Join(unknown, ", ")
	}
	if len(failed) > 0 {
		msg += "; could not ask " + strings.Join(failed, "; ")
	}
	return false, fmt.Errorf("%s. Install its CustomResourceDefinition in the members first, list the CustomResourceDefinition in dependencies, or, for a namespaced kind, set metadata.namespace", msg)
}

// askMembers asks every member whose connection is known how it serves gk.
func askMembers(ctx context.Context, e *engine.Engine, members []engine.Member, gk schema.GroupKind) map[string]discoveredScope {
	out := map[string]discoveredScope{}
	for _, m := range members {
		if m.Connection == nil {
			continue
		}
		c, err := e.Members().Get(ctx, m.Cluster.Name, *m.Connection)
		if err != nil {
			out[m.Cluster.Name] = discoveredScope{err: err}
			continue
		}
		mapping, err := c.Mapper.RESTMapping(gk)
		switch {
		case apimeta.IsNoMatchError(err):
			out[m.Cluster.Name] = discoveredScope{}
		case err != nil:
			out[m.Cluster.Name] = discoveredScope{err: fmt.Errorf("discover %s: %w", gk, err)}
		default:
			out[m.Cluster.Name] = discoveredScope{served: true, clusterScoped: mapping.Scope.Name() == apimeta.RESTScopeNameRoot}
		}
	}
	return out
}

// decideScope settles the template's namespace when expandRaw could not
// (in.scopeOpen), from the members' discovery, and refuses a namespace
// written on a kind the members serve cluster-scoped. It is called where
// a new identity is planned (ModifyPlan, the placement data source).
// ready is false while a member's connection is unknown.
func decideScope(ctx context.Context, e *engine.Engine, in *manifestInputs) (ready bool, diags diag.Diagnostics) {
	if in.template != nil && refuseInterpreterCustomization(in.template) != nil {
		return true, refuseInterpreterCustomization(in.template)
	}
	if in.template != nil && refuseMultiClusterService(in.template) != nil {
		return true, refuseMultiClusterService(in.template)
	}
	if in.template != nil && refuseAutoscaling(in.template) != nil {
		return true, refuseAutoscaling(in.template)
	}
	if in.template == nil || !in.scopeOpen {
		return true, nil
	}
	written := in.template.GetNamespace() != ""
	for _, m := range in.fleet.Members {
		if m.Connection == nil {
			// A written namespace already gives the identity; the check
			// against discovery waits for a plan with every connection.
			return written, nil
		}
	}
	gk := in.template.GroupVersionKind().GroupKind()
	answers := askMembers(ctx, e, in.fleet.Members, gk)
	clusterScoped, err := decideDiscovered(gk, answers, written)
	switch {
	case err != nil:
		diags.AddAttributeError(path.Root("manifest"), "Cannot decide the scope of "+objectName(in.template), err.Error())
	case clusterScoped && written:
		diags.AddAttributeError(path.Root("manifest").AtName("metadata").AtName("namespace"), "Namespace on a cluster-scoped object",
			fmt.Sprintf("%s is cluster-scoped in the members' discovery, so %s cannot have metadata.namespace %q; remove it.", gk, objectName(in.template), in.template.GetNamespace()))
	case !clusterScoped && !written:
		in.template.SetNamespace(api.DefaultNamespace)
	}
	in.scopeOpen = false
	return true, diags
}

// scopeFromID gives a template whose scope expandRaw could not decide the
// namespace the recorded id holds, when the id names the same object.
func scopeFromID(tmpl *unstructured.Unstructured, id string) bool {
	ref, err := api.ParseTemplateRef(id)
	if err != nil || tmpl.GetNamespace() != "" {
		return false
	}
	gvk := tmpl.GroupVersionKind()
	if ref.Group != gvk.Group || ref.Kind != gvk.Kind || ref.Name != tmpl.GetName() {
		return false
	}
	tmpl.SetNamespace(ref.Namespace)
	return true
}

// objectName is "<kind> <name>", with the namespace when there is one.
func objectName(t *unstructured.Unstructured) string {
	if t.GetNamespace() == "" {
		return t.GetKind() + " " + t.GetName()
	}
	return t.GetKind() + " " + t.GetNamespace() + "/" + t.GetName()
}

// unsettledScope refuses to act on a template whose namespace neither the
// configuration nor the recorded id settles: apply, refresh and destroy
// never decide a scope themselves.
func unsettledScope(in manifestInputs) diag.Diagnostics {
	var diags diag.Diagnostics
	if in.template != nil && in.scopeOpen && in.template.GetNamespace() == "" {
		diags.AddAttributeError(path.Root(attrID), "No recorded scope for "+objectName(in.template),
			"The recorded id does not name this object, so its namespace is unknown; run terraform plan again so the members' discovery decides it.")
	}
	return diags
}
