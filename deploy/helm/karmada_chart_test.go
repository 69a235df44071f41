package helm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartKarmadaCredentialsRole: with apiGroups=karmada the control
// plane reads Clusters' credentials where Karmada keeps them, so the chart
// grants Secrets in karmada-cluster and, the attack, nowhere else: not in
// its own namespace flotilla-system (the Role there keeps leader election
// and events), and never cluster-wide. Still one namespace for Secrets.
func TestChartKarmadaCredentialsRole(t *testing.T) {
	objs := render(t, "--set", "apiGroups=karmada")
	secretsIn := map[string]bool{}
	for _, o := range pick(objs, "Role") {
		role := into[rbacv1.Role](t, o)
		if slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "secrets") && slices.Contains(r.Verbs, "list")
		}) {
			secretsIn[role.Namespace] = true
		}
	}
	if len(secretsIn) != 1 || !secretsIn["karmada-cluster"] {
		t.Errorf("Secrets are granted in %v, want karmada-cluster only", secretsIn)
	}
	cr := into[rbacv1.ClusterRole](t, controlPlaneRole(t, objs))
	for _, r := range cr.Rules {
		if slices.Contains(r.Resources, "secrets") {
			t.Errorf("the ClusterRole grants Secrets: %+v", r)
		}
	}
	bound := false
	for _, o := range pick(objs, "RoleBinding") {
		rb := into[rbacv1.RoleBinding](t, o)
		if rb.Namespace == "karmada-cluster" && rb.RoleRef.Name == releaseName+"-credentials" {
			bound = len(rb.Subjects) == 1 && rb.Subjects[0].Name == releaseName && rb.Subjects[0].Namespace == namespace
		}
	}
	if !bound {
		t.Error("no RoleBinding in karmada-cluster gives the control plane's ServiceAccount the credentials Role")
	}
}

// TestChartKarmadaRBACOnHost applies the chart's Karmada-mode CRDs and RBAC
// (apiGroups=karmada) to a real host that has no karmada-cluster
// namespace and asks the host, as the chart's
// ServiceAccount, what it may do: Secrets (the Clusters' credentials, the
// Work signing key) and a get of the Pull clusters' Leases in
// karmada-cluster, and Karmada's groups, are granted;
// the attack: Secrets in flotilla-system or any other namespace, and
// flotilla's own groups, are not.
func TestChartKarmadaRBACOnHost(t *testing.T) {
	objs := render(t, "--set", "apiGroups=karmada", "--include-crds")
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	admin := controllertest.Client(t, host.RESTConfig(), controllertest.Scheme(t))
	// No karmada-cluster yet: the chart creates it (a host where Karmada
	// never ran has none).
	install(t, admin, objs)
	sa, err := kubernetes.NewForConfig(&rest.Config{Host: host.Host, BearerToken: serviceAccountToken(t, host.Clientset(t), releaseName),
		TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	may := func(verb, group, resource, ns string) (bool, error) {
		resource, sub, _ := strings.Cut(resource, "/")
		r, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: verb, Group: group, Resource: resource, Subresource: sub, Namespace: ns}}}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	}
	// The authorizer learns the bindings from a watch.
	testkit.Eventually(t, 30*time.Second, "the chart's Karmada-mode RBAC in force", func() (bool, string) {
		ok, err := may("list", "", "secrets", "karmada-cluster")
		return ok, fmt.Sprint(err)
	})
	for _, c := range []struct {
		verb, group, resource, ns string
		want                      bool
	}{
		{"get", "", "secrets", "karmada-cluster", true},
		{"watch", "", "secrets", "karmada-cluster", true},
		{"create", "", "secrets", "karmada-cluster", true},
		{"list", "cluster.karmada.io", "clusters", "", true},
		{"patch", "cluster.karmada.io", "clusters/status", "", true},
		{"create", "work.karmada.io", "works", "karmada-es-east", true},
		{"watch", "policy.karmada.io", "propagationpolicies", "shop", true},
		{"get", "coordination.k8s.io", "leases", "karmada-cluster", true},
		{"update", "coordination.k8s.io", "leases", "karmada-cluster", false},
		{"get", "coordination.k8s.io", "leases", "flotilla-cluster", false},
		{"get", "", "secrets", "flotilla-system", false},
		{"list", "", "secrets", "flotilla-system", false},
		{"list", "", "secrets", "", false},
		{"get", "", "secrets", "kube-system", false},
		{"list", "cluster.flotilla.io", "clusters", "", false},
		{"create", "work.flotilla.io", "works", "flotilla-es-east", false},
	} {
		got, err := may(c.verb, c.group, c.resource, c.ns)
		if err != nil || got != c.want {
			t.Errorf("%s %s.%s in %q: allowed %v (%v), want %v", c.verb, c.resource, c.group, c.ns, got, err, c.want)
		}
	}
}
