package webhook_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestWebhookEnforcesQuotas: a FederatedResourceQuota whose assignments add
// up to more than its overall limit is refused with the field and the
// numbers; a ResourceBinding whose clusters take its namespace over the
// quota is refused (Forbidden, reason QuotaExceeded) on create and on a
// scale-up, while a scale-down of a binding already over is let through.
func TestWebhookEnforcesQuotas(t *testing.T) {
	hub := startHost(t)
	ctx := t.Context()
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})

	bad := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}}
	testkit.MustYAML(t, bad, `
spec:
  overall: {cpu: "1"}
  staticAssignments: [{clusterName: east, hard: {cpu: 800m}}, {clusterName: west, hard: {cpu: 800m}}]
`)
	err := hub.Create(ctx, bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.overall[cpu]: Invalid value: "1": is less than the 1600m the static assignments add up to`) {
		t.Fatalf("assignments over overall: %v, want Invalid with the numbers", err)
	}
	good := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}}
	testkit.MustYAML(t, good, `spec: {overall: {requests.cpu: "1"}}`)
	testkit.MustCreate(t, hub, good)

	binding := func(name string, replicas int32) *workv1.ResourceBinding {
		rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name)}}
		rb.Spec.Resource = api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: name}
		rb.Spec.Placement = &api.Placement{}
		rb.Spec.Replicas = replicas
		rb.Spec.ReplicaRequirements = &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}
		rb.Spec.Clusters = []api.TargetCluster{{Name: "east", Replicas: replicas}}
		return rb
	}
	web := binding("web", 2)
	testkit.MustCreate(t, hub, web)
	err = hub.Create(ctx, binding("big", 2))
	if !apierrors.IsForbidden(err) || apierrors.ReasonForError(err) != webhook.ReasonQuotaExceeded ||
		!strings.Contains(err.Error(), "FederatedResourceQuota team-a/team-a: requests.cpu: 600m requested, 600m used of 1") {
		t.Fatalf("a binding over the quota: %v, want Forbidden, QuotaExceeded, with the numbers", err)
	}
	web.Spec.Replicas, web.Spec.Clusters[0].Replicas = 4, 4
	if err := hub.Update(ctx, web); apierrors.ReasonForError(err) != webhook.ReasonQuotaExceeded {
		t.Fatalf("a scale-up over the quota: %v, want QuotaExceeded", err)
	}
	web.Spec.Replicas, web.Spec.Clusters[0].Replicas = 3, 3
	if err := hub.Update(ctx, web); err != nil {
		t.Fatalf("a scale-up within the quota: %v", err)
	}
	t.Log("a quota lowered below what runs evicts nothing: a scale-down passes")
	good.Spec.Overall["requests.cpu"] = resource.MustParse("500m")
	if err := hub.Update(ctx, good); err != nil {
		t.Fatal(err)
	}
	web.Spec.Replicas, web.Spec.Clusters[0].Replicas = 2, 2
	if err := hub.Update(ctx, web); err != nil {
		t.Fatalf("a scale-down while over the quota: %v", err)
	}
}
