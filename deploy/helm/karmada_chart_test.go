package helm

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
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
