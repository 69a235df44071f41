package crossplane_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestManifestOfCustomResource: the Crossplane provider follows continuous
// mode. With flotilla's Argo Rollout customization in the host, a Manifest
// of a Rollout is divided 1:2, the provider reports the rendered hashes the
// members hold (it renders with the same customization), and the Manifest
// turns Ready only when the customization judges both members healthy.
func TestManifestOfCustomResource(t *testing.T) {
	e := startEnvWith(t, 2)
	ctx := t.Context()
	m1, m2 := e.names[0], e.names[1]

	for _, c := range append([]client.Client{e.mgmt}, e.members[m1], e.members[m2]) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		testkit.MustYAML(t, crd, apitest.RolloutCRDYAML)
		testkit.MustCreate(t, c, crd)
	}
	ric := apitest.ReadInterpreters(t, "../../examples/interpreter/argo-rollout.yaml")[0]
	testkit.MustCreate(t, e.mgmt, &configv1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: ric.Name}, Spec: ric.Spec})

	for _, m := range e.fleet {
		testkit.MustCreate(t, e.mgmt, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name + "-kubeconfig"},
			Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, m.KubeconfigPath)},
		})
		cl := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name}}
		cl.Spec.ForProvider = v1alpha1.ClusterParameters{APIEndpoint: m.Host, CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: m.Name + "-kubeconfig"}}
		testkit.MustCreate(t, e.mgmt, cl)
	}
	pp := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "checkout"}}
	testkit.MustYAML(t, pp, `
spec:
  forProvider:
    resourceSelectors:
    - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: checkout}
    placement:
      clusterAffinity: {clusterNames: [%s, %s]}
      replicaScheduling:
        replicaSchedulingType: Divided
        replicaDivisionPreference: Weighted
        weightPreference:
          staticWeightList:
          - {targetCluster: {clusterNames: [%s]}, weight: 1}
          - {targetCluster: {clusterNames: [%s]}, weight: 2}
`, m1, m2, m1, m2)
	testkit.MustCreate(t, e.mgmt, pp)
	mr := &v1alpha1.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "checkout"}}
	testkit.MustYAML(t, mr, `
spec:
  forProvider:
    manifest:
      apiVersion: argoproj.io/v1alpha1
      kind: Rollout
      metadata: {name: checkout}
      spec:
        replicas: 3
        selector: {matchLabels: {app: checkout}}
        template:
          metadata: {labels: {app: checkout}}
          spec: {containers: [{name: checkout, image: "checkout:1"}]}
`)
	testkit.MustCreate(t, e.mgmt, mr)

	memberRollout := func(name string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("argoproj.io/v1alpha1")
		u.SetKind("Rollout")
		return u, e.members[name].Get(ctx, client.ObjectKey{Namespace: "default", Name: "checkout"}, u)
	}
	t.Log("the customization divides the Rollout 1:2; the Manifest reports the hashes the members hold")
	poll(t, "rollouts 1:2 and matching rendered hashes", func() (bool, string) {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(mr), mr); err != nil {
			return false, err.Error()
		}
		hashes, got := map[string]string{}, map[string]string{}
		for _, c := range mr.Status.AtProvider.Clusters {
			hashes[c.Name] = c.RenderedHash
		}
		for _, n := range e.names {
			u, err := memberRollout(n)
			if err != nil {
				return false, err.Error()
			}
			r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			got[n] = fmt.Sprintf("%d/%s", r, u.GetAnnotations()[render.AnnotationRenderedHash])
		}
		ok := maps.Equal(mr.Status.AtProvider.Placement, map[string]int32{m1: 1, m2: 2}) &&
			got[m1] == "1/"+hashes[m1] && got[m2] == "2/"+hashes[m2] && hashes[m1] != ""
		return ok, fmt.Sprintf("placement %v, atProvider hashes %v, members %v", mr.Status.AtProvider.Placement, hashes, got)
	})

	t.Log("Ready once the customization judges both members healthy")
	if c, err := conditionOf(t, e.mgmt, mr, xpv2.TypeReady); err != nil || c.Status == corev1.ConditionTrue {
		t.Errorf("Ready before the members report their Rollouts: %+v %v", c, err)
	}
	for _, n := range e.names {
		u, err := memberRollout(n)
		if err != nil {
			t.Fatal(err)
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		u.Object["status"] = map[string]any{"observedGeneration": fmt.Sprint(u.GetGeneration()), "phase": "Healthy", "updatedReplicas": r, "availableReplicas": r, "replicas": r}
		if err := e.members[n].Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, "manifest Ready with the summed status", func() (bool, string) {
		c, status, err := readyAndStatus(t, e.mgmt, mr)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionTrue && strings.Contains(status, `"availableReplicas":3`), fmt.Sprintf("ready %+v, status %s", c, status)
	})
}
