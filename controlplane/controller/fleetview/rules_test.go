package fleetview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

func role(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func bind(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: role}, Subjects: subjects}
}

func TestImpersonationRulesFollowTheHostsProxyGrants(t *testing.T) {
	proxy := rbacv1.PolicyRule{APIGroups: []string{fleetview.Group}, Resources: []string{"clusters/proxy"}, Verbs: []string{"get"}}
	east := proxy
	east.ResourceNames = []string{"east"}
	other := rbacv1.PolicyRule{APIGroups: []string{fleetview.Group}, Resources: []string{"clusters"}, Verbs: []string{"get"}}
	wildcard := rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}
	alice := rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"}
	bob := rbacv1.Subject{Kind: rbacv1.UserKind, Name: "bob"}
	devs := rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "devs"}
	robot := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "robot"}
	tests := []struct {
		name     string
		roles    []rbacv1.ClusterRole
		bindings []rbacv1.ClusterRoleBinding
		cluster  string
		want     []rbacv1.PolicyRule
	}{
		{name: "no grant, no rule", roles: []rbacv1.ClusterRole{role("r", other)}, bindings: []rbacv1.ClusterRoleBinding{bind("r", alice)}, cluster: "east"},
		{name: "users, groups and service accounts of a proxy grant", roles: []rbacv1.ClusterRole{role("r", proxy)},
			bindings: []rbacv1.ClusterRoleBinding{bind("r", bob, alice, devs, robot)}, cluster: "east",
			want: []rbacv1.PolicyRule{
				{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice", "bob"}},
				{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"robot"}},
				{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"devs"}},
			}},
		{name: "a grant naming another cluster does not count", roles: []rbacv1.ClusterRole{role("r", east)},
			bindings: []rbacv1.ClusterRoleBinding{bind("r", alice)}, cluster: "west"},
		{name: "a grant naming this cluster counts", roles: []rbacv1.ClusterRole{role("r", east)},
			bindings: []rbacv1.ClusterRoleBinding{bind("r", alice)}, cluster: "east",
			want: []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice"}}}},
		{name: "cluster-admin style wildcards count", roles: []rbacv1.ClusterRole{role("admin", wildcard)},
			bindings: []rbacv1.ClusterRoleBinding{bind("admin", alice), bind("missing", bob)}, cluster: "east",
			want: []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := impersonationRules(proxySubjects(tt.roles, tt.bindings, tt.cluster))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("rules (-want +got):\n%s", diff)
			}
		})
	}
}
