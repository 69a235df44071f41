package helm

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/dashboard"
)

// TestChartDashboard: off by default; dashboard.enabled serves it on its
// port and Service, lets the control plane ask the host about callers even
// with metrics not secure, and renders the entry and viewer roles over the
// groups the host serves; certSecret mounts the certificate it names.
func TestChartDashboard(t *testing.T) {
	if args := containerArgs(t, render(t)); slices.ContainsFunc(args, func(a string) bool { return len(a) > 11 && a[:11] == "--dashboard" }) {
		t.Errorf("the dashboard is on by default: %v", args)
	}
	objs := render(t, "--set", "dashboard.enabled=true", "--set", "metrics.secure=false")
	args := containerArgs(t, objs)
	if got, _ := flagValue(args, "dashboard-bind-address"); got != ":8444" {
		t.Errorf("--dashboard-bind-address = %q, want :8444", got)
	}
	if _, ok := flagValue(args, "dashboard-cert-dir"); ok {
		t.Error("--dashboard-cert-dir without dashboard.certSecret")
	}
	services := 0
	for _, s := range pick(objs, "Service") {
		if s.GetName() == releaseName+"-dashboard" {
			services++
		}
	}
	if services != 1 {
		t.Errorf("%d dashboard Services, want 1", services)
	}
	cr := into[rbacv1.ClusterRole](t, controlPlaneRole(t, objs))
	for _, want := range []struct{ group, resource string }{{"authentication.k8s.io", "tokenreviews"}, {"authorization.k8s.io", "subjectaccessreviews"}} {
		if !slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, want.group) && slices.Contains(r.Resources, want.resource) && slices.Contains(r.Verbs, "create")
		}) {
			t.Errorf("the control plane may not create %s.%s, which the dashboard needs with metrics not secure", want.resource, want.group)
		}
	}
	roles := map[string]rbacv1.ClusterRole{}
	for _, o := range pick(objs, "ClusterRole") {
		roles[o.GetName()] = *into[rbacv1.ClusterRole](t, o)
	}
	entry := rbacv1.PolicyRule{NonResourceURLs: []string{dashboard.EntryPath}, Verbs: []string{"get"}}
	for _, name := range []string{"-dashboard-entry", "-dashboard-viewer"} {
		r, ok := roles[releaseName+name]
		if !ok || !slices.ContainsFunc(r.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Equal(p.NonResourceURLs, entry.NonResourceURLs) && slices.Equal(p.Verbs, entry.Verbs)
		}) {
			t.Errorf("ClusterRole %s%s missing or without GET %s", releaseName, name, dashboard.EntryPath)
		}
	}
	for _, want := range []struct{ group, resource, verb string }{{"", "events", "watch"}, {"coordination.k8s.io", "leases", "watch"}} {
		if !slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, want.group) && slices.Contains(r.Resources, want.resource) && slices.Contains(r.Verbs, want.verb)
		}) {
			t.Errorf("the control plane may not %s %s.%s, which the dashboard's watches need", want.verb, want.resource, want.group)
		}
	}
	viewer := roles[releaseName+"-dashboard-viewer"]
	for _, want := range []struct{ group, resource string }{{clusterv1.GroupVersion.Group, "clusters"}, {workv1.GroupVersion.Group, "resourcebindings"}, {"", "events"}} {
		if !slices.ContainsFunc(viewer.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, want.group) && slices.Contains(r.Resources, want.resource) && slices.Contains(r.Verbs, "list")
		}) {
			t.Errorf("the viewer may not list %s.%s", want.resource, want.group)
		}
	}
	withCert := containerArgs(t, render(t, "--set", "dashboard.enabled=true", "--set", "dashboard.certSecret=dashboard-tls"))
	if got, _ := flagValue(withCert, "dashboard-cert-dir"); got != "/etc/flotilla/dashboard-cert" {
		t.Errorf("with certSecret: --dashboard-cert-dir = %q", got)
	}
}
