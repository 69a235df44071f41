package webhook_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestWebhookValidatesMultiClusterService: the host refuses a
// MultiClusterService of type LoadBalancer and one naming a consumer
// twice, naming the field, through the installed webhook; a CrossCluster
// one is stored.
func TestWebhookValidatesMultiClusterService(t *testing.T) {
	hub := startHost(t)
	ctx := t.Context()
	if err := crd.InstallMultiClusterService(ctx, hub, time.Minute); err != nil {
		t.Fatal(err)
	}
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	m := &networkingv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	testkit.MustYAML(t, m, "spec:\n  types: [LoadBalancer]\n")
	err := hub.Create(ctx, m)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.types[0]: Forbidden: LoadBalancer is not served") {
		t.Fatalf("LoadBalancer: %v, want Invalid naming spec.types[0]", err)
	}
	testkit.MustYAML(t, m, "spec:\n  types: [CrossCluster]\n  consumerClusters: [{name: edge}, {name: edge}]\n")
	err = hub.Create(ctx, m)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.consumerClusters[1].name: Duplicate value: "edge"`) {
		t.Fatalf("consumer twice: %v, want Invalid naming spec.consumerClusters[1].name", err)
	}
	m.Spec.ConsumerClusters = m.Spec.ConsumerClusters[:1]
	testkit.MustCreate(t, hub, m)
}
