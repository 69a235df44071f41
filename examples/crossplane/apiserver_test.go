package examples

import (
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/package/crds"
)

// TestExamplesOnAPIServer creates the example managed resources, and the
// ones both Compositions render, on a real kube-apiserver with the
// provider's CRDs, with server-side dry run and strict field validation:
// the apiserver's own schema validation, defaulting and pruning rules
// (enums, types, embedded objects) accept them without dropping a field.
func TestExamplesOnAPIServer(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Clusters[0].RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Install(t.Context(), c, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	create := func(t *testing.T, source string, u *unstructured.Unstructured) {
		t.Helper()
		opts := &client.CreateOptions{
			DryRun: []string{metav1.DryRunAll},
			Raw:    &metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict},
		}
		if err := c.Create(t.Context(), u, opts); err != nil {
			t.Errorf("%s: %s %s: %v", source, u.GetKind(), u.GetName(), err)
		}
	}

	t.Run("files", func(t *testing.T) {
		for _, f := range []string{"setup/providerconfig.yaml", "active-active/clusters.yaml", "remote-dr/clusters.yaml"} {
			for _, doc := range readDocs(t, f) {
				create(t, f, doc)
			}
		}
	})
	t.Run("rendered", func(t *testing.T) {
		tools := crossplaneTools(t)
		addr := startFunction(t, tools)
		for _, app := range sortedKeys(apps) {
			r := render(t, tools, addr, app)
			for _, name := range sortedKeys(r.Composed) {
				mr := r.Composed[name].DeepCopy()
				if mr.GetNamespace() == "" {
					mr.SetNamespace(r.XR.GetNamespace())
				}
				// Drop what Crossplane itself sets on composed resources:
				// owner references to an XR that this apiserver does not have.
				mr.SetOwnerReferences(nil)
				create(t, filepath.Join(app, "composition.yaml")+" resource "+name, mr)
			}
		}
	})
}
