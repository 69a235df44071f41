package fleetview

import (
	"encoding/json"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// ImpersonatorRoleName names the ClusterRole and ClusterRoleBinding the
// control plane keeps in each member for the impersonator identity.
const ImpersonatorRoleName = "flotilla:cluster-proxy-impersonator"

// grantsProxy says whether rule allows some verb on clusters/proxy of the
// Cluster named cluster.
func grantsProxy(rule rbacv1.PolicyRule, cluster string) bool {
	group := slices.Contains(rule.APIGroups, fleetview.Group) || slices.Contains(rule.APIGroups, rbacv1.APIGroupAll)
	resource := slices.Contains(rule.Resources, fleetview.Resource+"/"+fleetview.Subresource) ||
		slices.Contains(rule.Resources, rbacv1.ResourceAll) || slices.Contains(rule.Resources, "*/"+fleetview.Subresource)
	named := len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, cluster)
	return group && resource && named && len(rule.Verbs) > 0
}

// proxySubjects returns the subjects of the host's ClusterRoleBindings whose
// ClusterRole grants clusters/proxy on cluster: the only identities the
// proxy will ever present in that member. Clusters are cluster-scoped, so
// namespaced RoleBindings cannot grant it.
func proxySubjects(roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding, cluster string) []rbacv1.Subject {
	granting := map[string]bool{}
	for _, r := range roles {
		for _, rule := range r.Rules {
			if grantsProxy(rule, cluster) {
				granting[r.Name] = true
				break
			}
		}
	}
	var out []rbacv1.Subject
	for _, b := range bindings {
		if b.RoleRef.Kind == "ClusterRole" && granting[b.RoleRef.Name] {
			out = append(out, b.Subjects...)
		}
	}
	return out
}

// impersonationRules are the rules that let the impersonator impersonate
// exactly subjects: users, groups and service accounts by name. Nothing is
// granted when no one may use the proxy. A service account is impersonated
// as its user name, which the member checks as impersonate on
// serviceaccounts; a ClusterRole names it in every namespace (as Karmada
// does), which only widens to same-named accounts the host does not know.
func impersonationRules(subjects []rbacv1.Subject) []rbacv1.PolicyRule {
	var users, groups, serviceAccounts []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	var rules []rbacv1.PolicyRule
	if users = sortedUnique(users); len(users) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: users})
	}
	if serviceAccounts = sortedUnique(serviceAccounts); len(serviceAccounts) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: serviceAccounts})
	}
	if groups = sortedUnique(groups); len(groups) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: groups})
	}
	return rules
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
