package shared

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestTrustWaitsForTheDetector attacks the window between a template's
// change and the detector's write of its binding: the binding controller
// hears of the template first, and rendering the new template on the old,
// scheduled binding rolled out replicas nobody had scheduled (a scale-up
// past a FederatedResourceQuota reached the member under Duplicated). The
// binding must wait until it records the template it renders.
func TestTrustWaitsForTheDetector(t *testing.T) {
	t.Parallel()
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(host.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := crd.Install(ctx, hub, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatal(err)
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "all"}}
	pp.Spec.ResourceSelectors = []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}
	pp.Spec.Placement = api.Placement{ClusterAffinity: &api.ClusterAffinity{ClusterNames: []string{"east"}}}
	if err := hub.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}

	written := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "team-a", "name": "web", "uid": "u-1"},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
	hash, err := policy.SpecificationHash(written)
	if err != nil {
		t.Fatal(err)
	}
	// The binding as the detector wrote it for the template at 3 replicas
	// and the scheduler then scheduled it.
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-a", Name: "web-deployment.apps", Generation: 2,
		Labels:      map[string]string{hoststore.LabelPolicy: policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "all"}.String()},
		Annotations: map[string]string{AnnotationTemplateSpecHash: hash},
	}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: "web", UID: "u-1"}
	rb.Spec.Replicas = 3
	rb.Spec.Placement = pp.Spec.Placement.DeepCopy()
	rb.Spec.Clusters = []api.TargetCluster{{Name: "east", Replicas: 3}}
	rb.Status.SchedulerObservedGeneration = 2

	got, err := Trust(ctx, hub, rb, written, Options{})
	if err != nil || len(got.Clusters) != 1 {
		t.Fatalf("the template the binding records: Trust = %+v, %v; want its clusters", got, err)
	}
	scaled := written.DeepCopy()
	if err := unstructured.SetNestedField(scaled.Object, int64(4), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if got, err := Trust(ctx, hub, rb, scaled, Options{}); !errors.Is(err, ErrPending) {
		t.Fatalf("a template scaled since the detector wrote the binding: Trust = %+v, %v; want ErrPending", got, err)
	}
}
