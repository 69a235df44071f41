package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartTenantCannotRaiseTheirQuota: a tenant bound in their namespace
// to Kubernetes' admin role and the chart's tenant role, as the security
// guide says, writes PropagationPolicies there and reads their
// FederatedResourceQuota, but may neither create one, nor raise it, nor
// write its status, nor delete it; the host's RBAC refuses each.
func TestChartTenantCannotRaiseTheirQuota(t *testing.T) {
	objs := render(t, "--include-crds")
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	admin := controllertest.Client(t, host.RESTConfig(), controllertest.Scheme(t))
	install(t, admin, objs)
	ctx := t.Context()
	const tenant = "alice"
	testkit.MustCreate(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	for _, role := range []string{"admin", releaseName + "-tenant"} {
		testkit.MustCreate(t, admin, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: tenant + "-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: tenant}},
		})
	}
	cfg := host.RESTConfig()
	cfg.Impersonate.UserName = tenant
	alice := controllertest.Client(t, cfg, controllertest.Scheme(t))

	quota := func() *policyv1.FederatedResourceQuota {
		return &policyv1.FederatedResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"},
			Spec:       api.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{"requests.cpu": resource.MustParse("2")}},
		}
	}
	if err := alice.Create(ctx, quota()); !apierrors.IsForbidden(err) {
		t.Fatalf("tenant creating their quota: %v, want Forbidden", err)
	}
	testkit.MustCreate(t, admin, quota())
	var got policyv1.FederatedResourceQuota
	if err := alice.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &got); err != nil {
		t.Fatalf("tenant reading their quota: %v", err)
	}
	raised := got.DeepCopy()
	raised.Spec.Overall["requests.cpu"] = resource.MustParse("200")
	if err := alice.Update(ctx, raised); !apierrors.IsForbidden(err) {
		t.Errorf("tenant raising their quota: %v, want Forbidden", err)
	}
	if err := alice.Patch(ctx, raised, client.MergeFrom(&got)); !apierrors.IsForbidden(err) {
		t.Errorf("tenant patching their quota: %v, want Forbidden", err)
	}
	used := got.DeepCopy()
	used.Status.OverallUsed = corev1.ResourceList{"requests.cpu": resource.MustParse("0")}
	if err := alice.Status().Update(ctx, used); !apierrors.IsForbidden(err) {
		t.Errorf("tenant writing their quota's status: %v, want Forbidden", err)
	}
	if err := alice.Delete(ctx, &got); !apierrors.IsForbidden(err) {
		t.Errorf("tenant deleting their quota: %v, want Forbidden", err)
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
	testkit.MustYAML(t, pp, `spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]}`)
	if err := alice.Create(ctx, pp); err != nil {
		t.Errorf("tenant writing a PropagationPolicy in their namespace: %v", err)
	}
}
