package shared

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestBindingName(t *testing.T) {
	cases := []struct {
		gk   schema.GroupKind
		name string
		want string
	}{
		// The core group keeps Karmada's name.
		{schema.GroupKind{Kind: "Service"}, "web", "web-service"},
		{schema.GroupKind{Kind: "ConfigMap"}, "settings", "settings-configmap"},
		// Any other group follows the kind, so kinds of the same name differ.
		{schema.GroupKind{Group: "serving.knative.dev", Kind: "Service"}, "web", "web-service.serving.knative.dev"},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", "web-deployment.apps"},
		{schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "e", "e-event.events.k8s.io"},
		{schema.GroupKind{Kind: "Event"}, "e", "e-event"},
		// RBAC names may hold ':' and capitals, which an object name may
		// not: Karmada's replacement and lowercasing.
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "system:aggregate-to-view", "system.aggregate-to-view-clusterrole.rbac.authorization.k8s.io"},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, "Admins", "admins-clusterrolebinding.rbac.authorization.k8s.io"},
	}
	seen := map[string]schema.GroupKind{}
	for _, tc := range cases {
		got := hoststore.BindingName(tc.gk, tc.name)
		if got != tc.want {
			t.Errorf("BindingName(%v, %q) = %q, want %q", tc.gk, tc.name, got, tc.want)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%v and %v share binding name %q", other, tc.gk, got)
		}
		seen[got] = tc.gk
	}
}

func noPlacement(rb *workv1.ResourceBinding) { rb.Spec.Placement = nil }

func attachedBy(rb *workv1.ResourceBinding) {
	rb.Labels = map[string]string{LabelAttached: "true"}
	rb.Spec.Placement = nil
}

// servedKinds is ServedKinds as a map from each served kind to its scope
// (namespaced), for the trust checks' tests.
type servedKinds map[schema.GroupVersionKind]bool

func (k servedKinds) ServedKind(gk schema.GroupKind) (schema.GroupVersionKind, bool, bool) {
	for gvk, namespaced := range k {
		if gvk.GroupKind() == gk {
			return gvk, namespaced, true
		}
	}
	return schema.GroupVersionKind{}, false, false
}

func (k servedKinds) KindNames() []string {
	var out []string
	for gvk := range k {
		out = append(out, gvk.GroupVersion().String()+" "+gvk.Kind)
	}
	slices.Sort(out)
	return out
}

// testKinds is the registry as discovery leaves it on a host.
func testKinds() servedKinds {
	return servedKinds{
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                       true,
		{Version: "v1", Kind: "Service"}:                                         true,
		{Version: "v1", Kind: "ConfigMap"}:                                       true,
		{Version: "v1", Kind: "Secret"}:                                          true,
		{Version: "v1", Kind: "Namespace"}:                                       false,
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}: false,
	}
}

func TestValidateResourceBinding(t *testing.T) {
	opts := Options{ReservedNamespaces: []string{"kube-*", "flotilla-system", "istio-system"}, kinds: testKinds()}
	cases := []struct {
		name string
		rb   *workv1.ResourceBinding
		// want are substrings of the errors, in order; none means valid.
		want []string
	}{
		{"detector's binding", sharedtest.Binding("shop", "web-deployment.apps", "apps/v1", "Deployment", "shop", "web"), nil},
		{"core kind", sharedtest.Binding("shop", "web-service", "v1", "Service", "shop", "web"), nil},
		{"attached dependency", sharedtest.Binding("shop", "cfg-configmap", "v1", "ConfigMap", "shop", "cfg", attachedBy), nil},
		{
			"another namespace's credential Secret",
			sharedtest.Binding("tenant-a", "member1-secret", "v1", "Secret", "flotilla-system", "member1", noPlacement),
			[]string{`spec.resource.namespace: Forbidden: must be the binding's own namespace "tenant-a"`, "spec.placement: Required value"},
		},
		{
			"another tenant's template",
			sharedtest.Binding("tenant-a", "victim-configmap", "v1", "ConfigMap", "tenant-b", "victim"),
			[]string{`spec.resource.namespace: Forbidden`},
		},
		{
			"cluster-scoped kind in a ResourceBinding",
			sharedtest.Binding("tenant-a", "admin-clusterrole.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", "ClusterRole", "tenant-a", "admin"),
			[]string{`spec.resource.kind: Forbidden: rbac.authorization.k8s.io/v1 ClusterRole is cluster-scoped: only a ClusterResourceBinding`},
		},
		{"ClusterResourceBinding of a ClusterRole", sharedtest.ClusterBinding("system.view-clusterrole.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", "ClusterRole", "system:view"), nil},
		{"ClusterResourceBinding of a Namespace", sharedtest.ClusterBinding("shop-namespace", "v1", "Namespace", "shop"), nil},
		{
			"ClusterResourceBinding of a namespaced kind",
			sharedtest.ClusterBinding("web-deployment.apps", "apps/v1", "Deployment", "web"),
			[]string{"spec.resource.kind: Forbidden: apps/v1 Deployment is namespaced"},
		},
		{
			"ClusterResourceBinding naming a namespace's template",
			sharedtest.Binding("", "web-service", "v1", "Service", "shop", "web"),
			[]string{"spec.resource.namespace: Forbidden: must be empty", "spec.resource.kind: Forbidden: v1 Service is namespaced"},
		},
		{
			"reserved Namespace template",
			sharedtest.ClusterBinding("kube-system-namespace", "v1", "Namespace", "kube-system"),
			[]string{"spec.resource.name: Forbidden: namespace kube-system is reserved"},
		},
		{
			"attached ClusterResourceBinding",
			sharedtest.ClusterBinding("cfg-configmap", "v1", "ConfigMap", "cfg", attachedBy),
			[]string{"metadata.labels[resourcebinding.flotilla.io/dependencies-distributor]: Forbidden"},
		},
		{
			"kind discovery did not find",
			sharedtest.Binding("shop", "w-widget.example.com", "example.com/v1", "Widget", "shop", "w"),
			[]string{`spec.resource.kind: Unsupported value: "example.com/v1 Widget"`},
		},
		{
			"reserved namespace",
			sharedtest.Binding("istio-system", "gw-service", "v1", "Service", "istio-system", "gw"),
			[]string{"metadata.namespace: Forbidden: namespace istio-system is reserved"},
		},
		{
			"execution namespace",
			sharedtest.Binding("flotilla-es-east", "w-service", "v1", "Service", "flotilla-es-east", "w"),
			[]string{"metadata.namespace: Forbidden"},
		},
		{
			"second binding for one template",
			sharedtest.Binding("shop", "other", "apps/v1", "Deployment", "shop", "web"),
			[]string{`metadata.name: Invalid value: "other": the binding of Deployment shop/web is named "web-deployment.apps"`},
		},
		{
			"writer's clusters without placement",
			sharedtest.Binding("shop", "web-deployment.apps", "apps/v1", "Deployment", "shop", "web", noPlacement, func(rb *workv1.ResourceBinding) {
				rb.Spec.Clusters = []api.TargetCluster{{Name: "evil"}}
			}),
			[]string{"spec.placement: Required value"},
		},
		{
			"attached binding of a workload kind",
			sharedtest.Binding("shop", "web-deployment.apps", "apps/v1", "Deployment", "shop", "web", attachedBy),
			[]string{`spec.resource.kind: Unsupported value: "apps/v1 Deployment"`},
		},
		{
			"attached binding with a placement",
			sharedtest.Binding("shop", "cfg-configmap", "v1", "ConfigMap", "shop", "cfg", attachedBy, func(rb *workv1.ResourceBinding) { rb.Spec.Placement = &api.Placement{} }),
			[]string{"spec.placement: Forbidden"},
		},
		{"no template name", sharedtest.Binding("shop", "-service", "v1", "Service", "shop", ""), []string{"spec.resource.name: Required value"}},
	}
	for _, tc := range cases {
		errs := ValidateResourceBinding(tc.rb, opts)
		if len(errs) != len(tc.want) {
			t.Errorf("%s: got %v, want %d errors %q", tc.name, errs, len(tc.want), tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%s: error %d = %q, want it to contain %q", tc.name, i, errs[i].Error(), w)
			}
		}
	}
}

// TestValidateResourceBindingWithoutDiscovery: the webhook has no
// discovery; the --template-kinds filter, or the skipped kinds, decide.
func TestValidateResourceBindingWithoutDiscovery(t *testing.T) {
	filtered := Options{TemplateKinds: []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "Deployment"}}}
	cases := []struct {
		name string
		opts Options
		rb   *workv1.ResourceBinding
		want string
	}{
		{"in the filter", filtered, sharedtest.Binding("shop", "web-deployment.apps", "apps/v1", "Deployment", "shop", "web"), ""},
		{"outside the filter", filtered, sharedtest.Binding("shop", "web-service", "v1", "Service", "shop", "web"), `Unsupported value: "v1 Service": supported values: "apps/v1 Deployment"`},
		{"no filter", Options{}, sharedtest.ClusterBinding("w-widget.example.com", "example.com/v1", "Widget", "w"), ""},
		{"skipped kind", Options{}, sharedtest.Binding("shop", "e-event", "v1", "Event", "shop", "e"), "v1 Event is never a template"},
		{"flotilla's own kind", Options{}, sharedtest.Binding("shop", "w-work.work.flotilla.io", "work.flotilla.io/v1alpha1", "Work", "shop", "w"), "is never a template"},
	}
	for _, tc := range cases {
		errs := ValidateResourceBinding(tc.rb, tc.opts)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.name, errs)
		case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, errs, tc.want)
		}
	}
}

func TestEffectiveConflictResolution(t *testing.T) {
	claim := func(kind string, cr api.ConflictResolution) *policy.Claim {
		return &policy.Claim{Kind: kind, Spec: &api.PropagationSpec{ConflictResolution: cr}}
	}
	cases := []struct {
		claim *policy.Claim
		allow bool
		want  api.ConflictResolution
	}{
		{claim(api.KindPropagationPolicy, api.ConflictOverwrite), false, api.ConflictAbort},
		{claim(api.KindPropagationPolicy, api.ConflictOverwrite), true, api.ConflictOverwrite},
		{claim(api.KindClusterPropagationPolicy, api.ConflictOverwrite), false, api.ConflictOverwrite},
		{claim(api.KindPropagationPolicy, ""), false, api.ConflictAbort},
		{claim(api.KindClusterPropagationPolicy, api.ConflictAbort), true, api.ConflictAbort},
	}
	for _, tc := range cases {
		if got := EffectiveConflictResolution(tc.claim, Options{AllowNamespacedOverwrite: tc.allow}); got != tc.want {
			t.Errorf("%s %q (allow %v) = %q, want %q", tc.claim.Kind, tc.claim.Spec.ConflictResolution, tc.allow, got, tc.want)
		}
	}
}

func TestValidateWork(t *testing.T) {
	good := func() *workv1.Work {
		w := &workv1.Work{ObjectMeta: metav1.ObjectMeta{
			Namespace:   "flotilla-es-east",
			Name:        "web-123",
			Labels:      map[string]string{LabelBindingPermanentID: "uid"},
			Annotations: map[string]string{AnnotationBindingNamespace: "shop", AnnotationBindingName: "web-configmap"},
		}}
		w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"shop","name":"web"}}`)}}}
		return w
	}
	cases := []struct {
		name   string
		mutate func(*workv1.Work)
		want   string
	}{
		{"rendered work", func(*workv1.Work) {}, ""},
		{"outside an execution namespace", func(w *workv1.Work) { w.Namespace = "shop" }, "metadata.namespace"},
		{"no permanent id", func(w *workv1.Work) { delete(w.Labels, LabelBindingPermanentID) }, "resourcebinding.flotilla.io/permanent-id"},
		{"no binding", func(w *workv1.Work) { w.Annotations = nil }, "resourcebinding.flotilla.io/name"},
		{"work of a ClusterResourceBinding", func(w *workv1.Work) {
			w.Annotations[AnnotationBindingNamespace] = ""
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"x"}}`)
		}, ""},
		{"namespaced object in a ClusterResourceBinding's work", func(w *workv1.Work) { w.Annotations[AnnotationBindingNamespace] = "" }, `must be the namespace ""`},
		{"two manifests", func(w *workv1.Work) {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, w.Spec.Workload.Manifests[0])
		}, "exactly one manifest"},
		{"object of another namespace", func(w *workv1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"kube-system","name":"x"}}`)
		}, `must be the namespace "shop"`},
		{"cluster-scoped object", func(w *workv1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"x"}}`)
		}, `must be the namespace "shop"`},
	}
	for _, tc := range cases {
		w := good()
		tc.mutate(w)
		errs := ValidateWork(w)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.name, errs)
		case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, errs, tc.want)
		}
	}
}
