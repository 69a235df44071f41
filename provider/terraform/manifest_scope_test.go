package terraform

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

func TestStaticScope(t *testing.T) {
	crd := func(group, kind, scope string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "x"},
			"spec":     map[string]any{"group": group, "scope": scope, "names": map[string]any{"kind": kind}},
		}}
	}
	for _, tc := range []struct {
		name             string
		gk               schema.GroupKind
		deps             []*unstructured.Unstructured
		cluster, decided bool
	}{
		{"built-in cluster-scoped", schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, nil, true, true},
		{"built-in namespaced", schema.GroupKind{Group: "apps", Kind: "Deployment"}, nil, false, true},
		{"core namespaced", schema.GroupKind{Kind: "ConfigMap"}, nil, false, true},
		{"custom kind, no CRD", schema.GroupKind{Group: "example.com", Kind: "Widget"}, nil, false, false},
		{"CRD in dependencies, Cluster", schema.GroupKind{Group: "example.com", Kind: "Widget"}, []*unstructured.Unstructured{crd("example.com", "Widget", "Cluster")}, true, true},
		{"CRD in dependencies, Namespaced", schema.GroupKind{Group: "example.com", Kind: "Widget"}, []*unstructured.Unstructured{crd("example.com", "Widget", "Namespaced")}, false, true},
		{"CRD for another group", schema.GroupKind{Group: "example.com", Kind: "Widget"}, []*unstructured.Unstructured{crd("other.io", "Widget", "Cluster")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, decided := staticScope(tc.gk, tc.deps)
			if cluster != tc.cluster || decided != tc.decided {
				t.Fatalf("staticScope(%s) = (cluster %v, decided %v), want (%v, %v)", tc.gk, cluster, decided, tc.cluster, tc.decided)
			}
		})
	}
}

func TestDecideDiscovered(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	root := discoveredScope{served: true, clusterScoped: true}
	ns := discoveredScope{served: true}
	for _, tc := range []struct {
		name       string
		answers    map[string]discoveredScope
		namespaced bool
		cluster    bool
		errHas     []string
	}{
		{"all cluster-scoped", map[string]discoveredScope{"east": root, "west": root}, false, true, nil},
		{"one serves it cluster-scoped, one does not serve it", map[string]discoveredScope{"east": root, "west": {}}, false, true, nil},
		{"namespaced", map[string]discoveredScope{"east": ns}, false, false, nil},
		{"disagree", map[string]discoveredScope{"east": root, "west": ns}, false, false, []string{"disagree", "cluster-scoped in east", "namespaced in west"}},
		{"nobody serves it, no namespace written", map[string]discoveredScope{"east": {}, "west": {err: fmt.Errorf("boom")}}, false, false, []string{"no member serves Widget.example.com", "not served by east", "west (boom)", "metadata.namespace"}},
		{"nobody serves it, namespace written", map[string]discoveredScope{"east": {}}, true, false, nil},
		{"no members, no namespace written", nil, false, false, []string{"no member serves"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, err := decideDiscovered(gk, tc.answers, tc.namespaced)
			if len(tc.errHas) == 0 {
				if err != nil || cluster != tc.cluster {
					t.Fatalf("got (cluster %v, %v), want (cluster %v, no error)", cluster, err, tc.cluster)
				}
				return
			}
			if err == nil {
				t.Fatalf("got cluster %v, want an error", cluster)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestSettleScopes(t *testing.T) {
	obj := func(apiVersion, kind, namespace string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("x")
		u.SetNamespace(namespace)
		return u
	}
	for _, tc := range []struct {
		name      string
		tmpl      *unstructured.Unstructured
		id        string
		wantNS    string
		wantOpen  bool
		wantError string
	}{
		{"namespaced built-in gets default", obj("apps/v1", "Deployment", ""), "", "default", false, ""},
		{"cluster-scoped built-in stays without", obj("v1", "Namespace", ""), "", "", false, ""},
		{"namespace on a cluster-scoped built-in is refused", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "shop"), "", "", false, "metadata.namespace"},
		{"custom kind stays open", obj("example.com/v1", "Widget", ""), "", "", true, ""},
		{"custom kind takes the recorded cluster scope", obj("example.com/v1", "Widget", ""), "example.com/v1, Kind=Widget, x", "", false, ""},
		{"custom kind takes the recorded namespace", obj("example.com/v1", "Widget", ""), "example.com/v1, Kind=Widget, default/x", "default", false, ""},
		{"an id of another object is not used", obj("example.com/v1", "Widget", ""), "example.com/v1, Kind=Gadget, default/x", "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := manifestInputs{template: tc.tmpl}
			diags := settleScopes(&in, tc.id)
			if tc.wantError != "" {
				if !diags.HasError() || !strings.Contains(fmt.Sprint(diags), tc.wantError) {
					t.Fatalf("want an error naming %s, got %v", tc.wantError, diags)
				}
				return
			}
			if diags.HasError() {
				t.Fatal(diags)
			}
			if got := in.template.GetNamespace(); got != tc.wantNS || in.scopeOpen != tc.wantOpen {
				t.Fatalf("namespace %q open %v, want %q open %v", got, in.scopeOpen, tc.wantNS, tc.wantOpen)
			}
		})
	}
}

// widgetGVR is the cluster-scoped custom kind the acceptance test installs.
var widgetGVR = schema.GroupVersionResource{Group: "fleet.example.com", Version: "v1", Resource: "widgets"}

// installClusterScopedCRD installs the Widget CRD (scope Cluster) in every
// member, as a platform team would before Terraform runs, and waits until
// each serves it.
func (m *members) installClusterScopedCRD(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.fleet.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "fleet.example.com",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true),
				}},
			}},
		},
	}
	m.installCRD(t, crd, widgetGVR)
}

// installCRD installs crd in every member and waits until each serves gvr.
func (m *members) installCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, gvr schema.GroupVersionResource) {
	t.Helper()
	ctx := context.Background()
	for name, c := range m.byName {
		cs, err := apiextensionsclient.NewForConfig(c.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("install the %s CRD in %s: %v", crd.Name, name, err)
		}
		dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("the %s CRD is not served in %s: %v", crd.Name, name, err)
		}
	}
}

// widget reads the cluster-scoped Widget from a member; nil when absent.
func (m *members) widget(t *testing.T, cluster, name string) *unstructured.Unstructured {
	t.Helper()
	w, err := dynamic.NewForConfigOrDie(m.byName[cluster].RESTConfig()).Resource(widgetGVR).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get widget in %s: %v", cluster, err)
	}
	return w
}

func ptrTo[T any](v T) *T { return &v }

func (m *members) widgetConfig(size int) string {
	return m.clusterHCL("east", `labels = { region = "us-east" }`) + m.clusterHCL("west", `labels = { region = "eu-west" }`) + fmt.Sprintf(`
resource "flotilla_cluster_propagation_policy" "widgets" {
  name               = "widgets"
  resource_selectors = [{ api_version = "fleet.example.com/v1", kind = "Widget" }]
  placement          = { cluster_affinity = { cluster_names = ["east", "west"] } }
}

resource "flotilla_manifest" "widget" {
  manifest = {
    apiVersion = "fleet.example.com/v1"
    kind       = "Widget"
    metadata   = { name = "gear" }
    spec       = { size = %d }
  }
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_cluster_propagation_policy.widgets]
}
`, size)
}

// TestAccManifestClusterScopedCustomKind: a cluster-scoped custom kind,
// whose CRD the members serve but no built-in table knows, is planned
// without a namespace (decided by the members' discovery), created, has an
// empty second plan, is updated in place and destroyed, in both members.
func TestAccManifestClusterScopedCustomKind(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	m.installClusterScopedCRD(t)
	checkSize := func(want int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for cluster := range m.byName {
				w := m.widget(t, cluster, "gear")
				if w == nil {
					return fmt.Errorf("cluster %s: widget gear is missing", cluster)
				}
				if w.GetNamespace() != "" {
					return fmt.Errorf("cluster %s: widget gear has namespace %q", cluster, w.GetNamespace())
				}
				if got, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); got != want {
					return fmt.Errorf("cluster %s: want size %d, got %d", cluster, want, got)
				}
			}
			return nil
		}
	}
	const addr = "flotilla_manifest.widget"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: m.widgetConfig(1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("fleet.example.com/v1, Kind=Widget, gear")),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("policy"), knownvalue.StringExact("ClusterPropagationPolicy widgets")),
				}},
				Check: checkSize(1),
			},
			{
				Config:           m.widgetConfig(1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: m.widgetConfig(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("fleet.example.com/v1, Kind=Widget, gear")),
				}},
				Check: checkSize(2),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			for cluster := range m.byName {
				if m.widget(t, cluster, "gear") != nil {
					return fmt.Errorf("cluster %s: widget gear left behind after destroy", cluster)
				}
			}
			return nil
		},
	})
}
