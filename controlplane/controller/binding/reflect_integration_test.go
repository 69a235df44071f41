package binding

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestReflectSurvivesASpecChange writes the aggregated status over a
// template copy that is stale because its owner scaled it meanwhile (as
// `kubectl scale` does between the cache's copy and the write): the write
// must land, not conflict and send the whole pass back to retry, and the
// owner's spec must stay as the owner set it.
func TestReflectSurvivesASpecChange(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(host.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	stale := &unstructured.Unstructured{}
	stale.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), stale); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](5)
	if err := c.Update(ctx, d); err != nil {
		t.Fatal(err)
	}

	b := &bindingReconciler{client: c}
	agg := health.Aggregated{Status: map[string]any{"replicas": int64(2), "readyReplicas": int64(2)}}
	if err := b.reflect(ctx, stale, agg); err != nil {
		t.Fatalf("status over a copy older than the owner's scale: %v", err)
	}
	var got appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReadyReplicas != 2 || got.Status.Replicas != 2 {
		t.Errorf("status = %+v, want the aggregated replicas 2 and readyReplicas 2", got.Status)
	}
	if ptr.Deref(got.Spec.Replicas, 0) != 5 {
		t.Errorf("spec.replicas = %d, want the owner's 5 untouched", ptr.Deref(got.Spec.Replicas, 0))
	}
}
