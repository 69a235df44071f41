package crossplane_test

import (
	"fmt"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// quotaMR is a FederatedResourceQuota managed resource in namespace team.
func quotaMR(t *testing.T, name, overall, member, hard string) *v1alpha1.FederatedResourceQuota {
	t.Helper()
	mr := &v1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
	testkit.MustYAML(t, mr, `
spec:
  forProvider:
    overall: {cpu: "%s"}
    staticAssignments:
    - {clusterName: %s, hard: {cpu: "%s"}}
`, overall, member, hard)
	return mr
}

// TestFederatedResourceQuotaManaged drives the provider and the control
// plane against a real host and one real member: a FederatedResourceQuota
// managed resource becomes the host quota, whose static assignment reaches
// the member as a ResourceQuota and whose enforced limit comes back in
// status.atProvider; an assignment over overall is refused naming the
// field; a host quota the managed resource did not create is never
// adopted; deleting the managed resource removes the host quota and the
// member's ResourceQuota. The same env then runs FederatedHPA and
// CronFederatedHPA managed resources (checkAutoscalersManaged) and
// MultiClusterService ones (checkMultiClusterServiceManaged).
func TestFederatedResourceQuotaManaged(t *testing.T) {
	e := startEnvWith(t, 1)
	ctx := t.Context()
	member := e.names[0]
	testkit.MustCreate(t, e.mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.SystemNamespace}})
	controllertest.RegisterMember(t, e.mgmt, e.fleet[0])
	testkit.MustCreate(t, e.mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})

	taken := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "taken"}}
	testkit.MustYAML(t, taken, `
spec:
  overall: {cpu: "1"}
`)
	testkit.MustCreate(t, e.mgmt, taken)
	grab := quotaMR(t, "taken", "100", member, "100")
	testkit.MustCreate(t, e.mgmt, grab)
	bad := quotaMR(t, "bad", "2", member, "3")
	testkit.MustCreate(t, e.mgmt, bad)
	mr := quotaMR(t, "team", "2", member, "1")
	testkit.MustCreate(t, e.mgmt, mr)

	synced := func(mg *v1alpha1.FederatedResourceQuota, want string) {
		t.Helper()
		poll(t, fmt.Sprintf("%s Synced=False naming %q", mg.Name, want), func() (bool, string) {
			c, err := conditionOf(t, e.mgmt, mg, xpv2.TypeSynced)
			if err != nil {
				return false, err.Error()
			}
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want), c.Message
		})
	}
	synced(grab, "is never adopted")
	synced(bad, "spec.forProvider.overall[cpu]: Invalid value: \"2\": is less than the 3 the static assignments add up to")

	t.Log("the quota reaches the member through the host, and its enforced limit comes back")
	poll(t, "member ResourceQuota team/team with hard cpu 1", func() (bool, string) {
		var rq corev1.ResourceQuota
		if err := e.members[member].Get(ctx, client.ObjectKey{Namespace: "team", Name: "team"}, &rq); err != nil {
			return false, err.Error()
		}
		return rq.Spec.Hard.Cpu().String() == "1", rq.Spec.Hard.Cpu().String()
	})
	poll(t, "atProvider.overall and Ready", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, mr, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		got := mr.Status.AtProvider.Overall.Cpu().String()
		return got == "2" && c.Status == corev1.ConditionTrue, fmt.Sprintf("overall cpu %s, Ready %s", got, c.Status)
	})

	var live policyv1.FederatedResourceQuota
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(taken), &live); err != nil || live.Spec.Overall.Cpu().String() != "1" {
		t.Errorf("the unowned host quota changed: %v, overall cpu %s", err, live.Spec.Overall.Cpu())
	}
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "team", Name: "bad"}, &live); !apierrors.IsNotFound(err) {
		t.Errorf("the invalid quota reached the host: %v", err)
	}

	t.Log("deleting the managed resource removes the host quota and the member's ResourceQuota")
	if err := e.mgmt.Delete(ctx, mr); err != nil {
		t.Fatal(err)
	}
	gone(t, e.mgmt, &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "team"}})
	gone(t, e.members[member], &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "team"}})
	if err := e.mgmt.Delete(ctx, grab); err != nil {
		t.Fatal(err)
	}
	gone(t, e.mgmt, grab)
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(taken), &live); err != nil {
		t.Errorf("deleting the managed resource that did not own it removed the host quota: %v", err)
	}
	checkAutoscalersManaged(t, e)
	checkMultiClusterServiceManaged(t, e)
}
