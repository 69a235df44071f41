package crossplane_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// checkMultiClusterServiceManaged drives MultiClusterService managed
// resources in namespace team (which exists) against the env's host and
// running control plane: one becomes the host's networking.flotilla.io
// MultiClusterService with spec.forProvider as its spec, and the
// ServiceApplied condition the multi-cluster services controller writes
// (here: no Service team/web is placed, so no cluster provides it) comes
// back in status.atProvider; one asking for a
// LoadBalancer exposure is refused naming spec.forProvider.types[0] and
// never reaches the host; deleting the managed resource deletes the host
// object.
func checkMultiClusterServiceManaged(t *testing.T, e env) {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	defer func() {
		t.Logf("the MultiClusterService managed resources took %s", time.Since(start).Round(10*time.Millisecond))
	}()
	consumer := e.names[0]
	mcs := &v1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}}
	testkit.MustYAML(t, mcs, `
spec:
  forProvider:
    types: [CrossCluster]
    consumerClusters: [{name: %s}]
`, consumer)
	testkit.MustCreate(t, e.mgmt, mcs)
	bad := &v1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "lb"}}
	testkit.MustYAML(t, bad, `
spec:
  forProvider:
    types: [LoadBalancer]
`)
	testkit.MustCreate(t, e.mgmt, bad)

	const why = "Service team/web is not propagated"
	poll(t, "the host MultiClusterService's ServiceApplied condition in atProvider", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, mcs, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		applied := apimeta.FindStatusCondition(mcs.Status.AtProvider.Conditions, multicluster.ConditionServiceApplied)
		if applied == nil || applied.Status != metav1.ConditionFalse || applied.Reason != multicluster.ReasonNoProviderCluster || !strings.Contains(applied.Message, why) {
			return false, fmt.Sprintf("atProvider %+v", mcs.Status.AtProvider)
		}
		return c.Status == corev1.ConditionTrue, fmt.Sprintf("Ready %s", c.Status)
	})
	var live networkingv1.MultiClusterService
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, &live); err != nil ||
		len(live.Spec.Types) != 1 || len(live.Spec.ConsumerClusters) != 1 || live.Spec.ConsumerClusters[0].Name != consumer {
		t.Errorf("host MultiClusterService team/web: %v, spec %+v", err, live.Spec)
	}
	poll(t, "lb Synced=False naming spec.forProvider.types[0]", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, bad, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "MultiClusterService team/lb is invalid") &&
			strings.Contains(c.Message, "spec.forProvider.types[0]: Forbidden: LoadBalancer is not served"), c.Message
	})
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "team", Name: "lb"}, &live); !apierrors.IsNotFound(err) {
		t.Errorf("the LoadBalancer MultiClusterService reached the host: %v", err)
	}

	t.Log("deleting the managed resource deletes the host MultiClusterService")
	for _, mg := range []client.Object{mcs, bad} {
		if err := e.mgmt.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
	}
	// As for the autoscalers, the managed resources' own removal is
	// crossplane-runtime's and not waited for.
	gone(t, e.mgmt, &networkingv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}})
}
