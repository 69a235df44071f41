package helm

import (
	"bytes"
	"encoding/base64"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartClusterProxy: clusterProxy.enabled serves the cluster proxy with
// the chart's serving certificate (valid for its Service), registers the
// APIService trusting that certificate's CA, and grants what delegated
// authentication and authorization and the impersonation RBAC need; off
// (the default), none of it is rendered.
func TestChartClusterProxy(t *testing.T) {
	if len(pick(render(t), "APIService")) != 0 {
		t.Fatal("the default render registers an APIService")
	}
	objs := render(t, "--set", "clusterProxy.enabled=true")
	api := one(t, objs, "APIService")
	if got, _, _ := unstructured.NestedString(api.Object, "spec", "group"); got != "clusterproxy.flotilla.io" || api.GetName() != "v1alpha1.clusterproxy.flotilla.io" {
		t.Fatalf("APIService %s for group %q", api.GetName(), got)
	}
	svcName, _, _ := unstructured.NestedString(api.Object, "spec", "service", "name")
	caB64, _, _ := unstructured.NestedString(api.Object, "spec", "caBundle")
	caBundle, err := base64.StdEncoding.DecodeString(caB64)
	if err != nil {
		t.Fatal(err)
	}
	crt, _, ca := servingCert(t, objs)
	if !bytes.Equal(caBundle, ca) {
		t.Error("the APIService's caBundle is not the serving certificate's CA")
	}
	if err := verifyFor(crt, caBundle, svcName+"."+namespace+".svc"); err != nil {
		t.Errorf("the serving certificate is not valid for the proxy's Service %s: %v", svcName, err)
	}
	var svc *corev1.Service
	for _, o := range pick(objs, "Service") {
		if o.GetName() == svcName {
			svc = into[corev1.Service](t, o)
		}
	}
	if svc == nil || svc.Spec.Ports[0].TargetPort.String() != "cluster-proxy" {
		t.Fatalf("no Service %s targeting the cluster-proxy port: %+v", svcName, svc)
	}
	dep := into[appsv1.Deployment](t, one(t, objs, "Deployment"))
	c := dep.Spec.Template.Spec.Containers[0]
	if v, ok := flagValue(c.Args, "cluster-proxy-cert-dir"); !ok || v == "" {
		t.Errorf("no --cluster-proxy-cert-dir in %v", c.Args)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "cluster-proxy" }) {
		t.Error("the container has no cluster-proxy port")
	}
	rules := into[rbacv1.ClusterRole](t, controlPlaneRole(t, objs)).Rules
	grants := func(group, resource, verb string) bool {
		return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, g := range []struct{ group, resource, verb string }{
		{"authentication.k8s.io", "tokenreviews", "create"}, {"authorization.k8s.io", "subjectaccessreviews", "create"},
		{"rbac.authorization.k8s.io", "clusterroles", "watch"}, {"rbac.authorization.k8s.io", "clusterrolebindings", "watch"},
		{"search.flotilla.io", "resourceregistries", "watch"}, {"search.flotilla.io", "resourceregistries/status", "patch"},
	} {
		if !grants(g.group, g.resource, g.verb) {
			t.Errorf("the ClusterRole does not grant %s %s.%s", g.verb, g.resource, g.group)
		}
	}
	if grants("rbac.authorization.k8s.io", "clusterroles", "create") || grants("rbac.authorization.k8s.io", "clusterroles", "bind") || grants("rbac.authorization.k8s.io", "clusterroles", "escalate") {
		t.Error("the control plane may write host RBAC")
	}
	var reader bool
	for _, o := range pick(objs, "RoleBinding") {
		rb := into[rbacv1.RoleBinding](t, o)
		if rb.Namespace == "kube-system" && rb.RoleRef.Name == "extension-apiserver-authentication-reader" {
			reader = true
		}
	}
	if !reader {
		t.Error("no RoleBinding to extension-apiserver-authentication-reader in kube-system")
	}
}
