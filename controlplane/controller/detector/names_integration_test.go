package detector_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

var knativeService = schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"}

// installKnativeServiceCRD installs a CRD of Knative's Service kind (the
// schema left open) and waits until the host serves it.
func installKnativeServiceCRD(t *testing.T, c client.Client) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "services.serving.knative.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: knativeService.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "services", Singular: "service", Kind: "Service", ListKind: "ServiceList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	testkit.MustCreate(t, c, crd)
	testkit.Eventually(t, controllertest.Deadline, "knative Service CRD served", func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(knativeService.GroupVersion().WithKind("ServiceList"))
		err := c.List(t.Context(), list)
		return err == nil, fmt.Sprint(err)
	})
}

// TestBindingNamesCarryTheGroup: a core Service "web" and a Knative Service
// "web" in one namespace, claimed by one policy, get bindings of their own
// (Karmada's "<name>-<kind>" would give both "web-service"), and neither
// binding ever flips to the other kind. A binding that holds a template's
// name but another kind is never turned into that template's.
func TestBindingNamesCarryTheGroup(t *testing.T) {
	env := controllertest.StartFleet(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	installKnativeServiceCRD(t, hub)
	// A binding of another kind already holds the Knative Service's
	// binding name: the detector must refuse to turn it into the Service's.
	squatter := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api-service.serving.knative.dev"}}
	squatter.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "api-service.serving.knative.dev"}
	testkit.MustCreate(t, hub, squatter)
	// Its template exists, so the orphan collector keeps it.
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: squatter.Name}})
	env.StartControlPlane(t, func(o *shared.Options) {
		o.TemplateKinds = append(slices.Clone(shared.DefaultTemplateKinds), knativeService)
	})

	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "services"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service}
  - {apiVersion: serving.knative.dev/v1, kind: Service}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, names[0])
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	})
	for _, name := range []string{"web", "api"} {
		ks := &unstructured.Unstructured{}
		ks.SetGroupVersionKind(knativeService)
		ks.SetNamespace("default")
		ks.SetName(name)
		ks.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "nginx"}}}}}
		testkit.MustCreate(t, hub, ks)
	}

	want := map[string]string{
		"web-service":                     "v1 Service",
		"web-service.serving.knative.dev": "serving.knative.dev/v1 Service",
	}
	testkit.Eventually(t, controllertest.Deadline, "one binding per kind", func() (bool, string) {
		got := map[string]string{}
		for name := range want {
			var rb workv1.ResourceBinding
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &rb); err != nil {
				return false, err.Error()
			}
			got[name] = rb.Spec.Resource.APIVersion + " " + rb.Spec.Resource.Kind
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
	testkit.Eventually(t, controllertest.Deadline, "core Service in the member", func() (bool, string) {
		err := env.Members[names[0]].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &corev1.Service{})
		return err == nil, fmt.Sprint(err)
	})
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for name, kind := range want {
			var rb workv1.ResourceBinding
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &rb); err != nil {
				t.Fatal(err)
			}
			if got := rb.Spec.Resource.APIVersion + " " + rb.Spec.Resource.Kind; got != kind {
				t.Fatalf("binding %s flipped to %s, want %s", name, got, kind)
			}
		}
		var sq workv1.ResourceBinding
		if err := hub.Get(ctx, client.ObjectKeyFromObject(squatter), &sq); err != nil {
			t.Fatal(err)
		}
		if sq.Spec.Resource.Kind != "ConfigMap" || sq.Spec.Placement != nil {
			t.Fatalf("the detector turned binding %s of a ConfigMap into %s %s", sq.Name, sq.Spec.Resource.APIVersion, sq.Spec.Resource.Kind)
		}
	}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-service"}, &workv1.ResourceBinding{}); apierrors.IsNotFound(err) {
		t.Fatal("core Service binding vanished")
	}
}
