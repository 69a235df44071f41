package federatedquota_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestOverallEnforced runs the whole control plane on a real host and a
// real member with a FederatedResourceQuota of one CPU in requests: a
// template within it is scheduled and counted in overallUsed, a second
// one that would go over stays unscheduled with the numbers in its
// Scheduled condition and never reaches the member, a scale-up within the
// quota rolls out while one past it is held at the previous replicas, and
// raising the quota lets both through.
func TestOverallEnforced(t *testing.T) {
	start := time.Now()
	f := controllertest.StartFleet(t, 1)
	hub, ctx, member := f.Hub, t.Context(), f.Members[f.Names[0]]
	f.StartControlPlane(t)

	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	frq := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}}
	testkit.MustYAML(t, frq, `spec: {overall: {requests.cpu: "1", pods: "10"}}`)
	testkit.MustCreate(t, hub, frq)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "all"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
`, f.Names[0])
	testkit.MustCreate(t, hub, pp)

	testkit.MustCreate(t, hub, deployment("web", 2))
	waitReplicas(t, member, "web", 2)
	testkit.Eventually(t, deadline, "overallUsed", func() (bool, string) {
		var got policyv1.FederatedResourceQuota
		if err := hub.Get(ctx, client.ObjectKeyFromObject(frq), &got); err != nil {
			return false, err.Error()
		}
		cpu, pods := got.Status.OverallUsed["requests.cpu"], got.Status.OverallUsed["pods"]
		return cpu.Cmp(resource.MustParse("600m")) == 0 && pods.Value() == 2, fmt.Sprintf("status %+v", got.Status)
	})

	t.Log("a template that would go over stays unscheduled, with the numbers")
	testkit.MustCreate(t, hub, deployment("big", 2))
	waitQuotaExceeded(t, hub, "big", "FederatedResourceQuota team-a/team-a: requests.cpu: 600m requested, 600m used of 1")
	var d appsv1.Deployment
	if err := member.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "big"}, &d); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("the template over quota reached the member: %v", err)
	}

	t.Log("a scale-up within the quota rolls out; one past it is held")
	scale(t, hub, "web", 3)
	waitReplicas(t, member, "web", 3)
	scale(t, hub, "web", 4)
	waitQuotaExceeded(t, hub, "web", "requests.cpu: 1200m requested, 0 used of 1")
	waitReplicas(t, member, "web", 3)

	t.Log("raising the quota lets both through")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(frq), frq, func() { frq.Spec.Overall["requests.cpu"] = resource.MustParse("2") })
	waitReplicas(t, member, "web", 4)
	waitReplicas(t, member, "big", 2)
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// deployment is a Deployment of team-a whose pods request 300m CPU each.
func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}},
				}}},
			},
		},
	}
}

// scale sets a host Deployment's replicas.
func scale(t *testing.T, hub client.Client, name string, replicas int32) {
	t.Helper()
	var d appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "team-a", Name: name}, &d, func() { d.Spec.Replicas = ptr.To(replicas) })
}

// waitReplicas waits for the member's Deployment to have replicas.
func waitReplicas(t *testing.T, member client.Client, name string, replicas int32) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%s at %d replicas in the member", name, replicas), func() (bool, string) {
		var d appsv1.Deployment
		if err := member.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: name}, &d); err != nil {
			return false, err.Error()
		}
		return d.Spec.Replicas != nil && *d.Spec.Replicas == replicas, fmt.Sprintf("replicas %v", ptr.Deref(d.Spec.Replicas, -1))
	})
}

// waitQuotaExceeded waits for the binding of a Deployment to be held by
// the quota with a message containing want.
func waitQuotaExceeded(t *testing.T, hub client.Client, name, want string) {
	t.Helper()
	key := client.ObjectKey{Namespace: "team-a", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name)}
	testkit.Eventually(t, deadline, name+" held by the quota", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "QuotaExceeded" && strings.Contains(c.Message, want), fmt.Sprintf("conditions %+v", rb.Status.Conditions)
	})
}
