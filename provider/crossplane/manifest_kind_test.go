package crossplane

import (
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCheckTemplateKind(t *testing.T) {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, ns := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "work.flotilla.io", Version: "v1alpha1", Kind: "ResourceBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "Object"},
	} {
		mapper.Add(ns, apimeta.RESTScopeNamespace)
	}
	for _, cs := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Namespace"}, {Group: "cluster.flotilla.io", Version: "v1alpha1", Kind: "Cluster"},
		{Group: "policy.flotilla.io", Version: "v1alpha1", Kind: "ClusterPropagationPolicy"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
	} {
		mapper.Add(cs, apimeta.RESTScopeRoot)
	}
	tests := []struct {
		name    string
		obj     string
		wantErr string // "" accepts
	}{
		{name: "namespaced core kind", obj: `{"apiVersion":"v1","kind":"ConfigMap"}`},
		{name: "namespaced group kind", obj: `{"apiVersion":"apps/v1","kind":"Deployment"}`},
		{name: "opaque Secret", obj: `{"apiVersion":"v1","kind":"Secret","type":"Opaque"}`},
		{name: "cluster-scoped core kind", obj: `{"apiVersion":"v1","kind":"Namespace"}`, wantErr: "spec.forProvider.manifest.kind: Namespace is cluster-scoped in the host"},
		{name: "cluster-scoped group kind", obj: `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass"}`, wantErr: "PriorityClass.scheduling.k8s.io is cluster-scoped"},
		{name: "flotilla Cluster", obj: `{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster"}`, wantErr: "spec.forProvider.manifest.kind: a Manifest may not apply Cluster.cluster.flotilla.io: flotilla's own API groups"},
		{name: "flotilla cluster-wide policy", obj: `{"apiVersion":"policy.flotilla.io/v1alpha1","kind":"ClusterPropagationPolicy"}`, wantErr: "flotilla's own API groups"},
		{name: "flotilla namespaced binding", obj: `{"apiVersion":"work.flotilla.io/v1alpha1","kind":"ResourceBinding"}`, wantErr: "flotilla's own API groups"},
		{name: "the provider's own kinds", obj: `{"apiVersion":"fleet.m.flotilla.io/v1alpha1","kind":"Manifest"}`, wantErr: "flotilla's own API groups"},
		{name: "Karmada kinds", obj: `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy"}`, wantErr: "Karmada's API groups"},
		{name: "another provider's managed resource", obj: `{"apiVersion":"kubernetes.m.crossplane.io/v1alpha1","kind":"Object"}`, wantErr: "Crossplane's API groups"},
		{name: "namespaced RBAC kind", obj: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role"}`, wantErr: "RBAC kinds"},
		{name: "cluster-wide RBAC kind", obj: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding"}`, wantErr: "RBAC kinds"},
		{name: "service account token Secret", obj: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token"}`, wantErr: "spec.forProvider.manifest.type kubernetes.io/service-account-token"},
		{name: "a group that only ends like a refused one", obj: `{"apiVersion":"notflotilla.io/v1","kind":"Thing"}`, wantErr: "the host does not serve"},
		{name: "unknown kind", obj: `{"apiVersion":"example.com/v1","kind":"Widget"}`, wantErr: "spec.forProvider.manifest: the host does not serve example.com/v1, Kind=Widget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(tc.obj)); err != nil {
				t.Fatal(err)
			}
			err := checkTemplateKind(mapper, u)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			case err != nil && !isKindRefusal(err):
				t.Errorf("not a refusal, so a deleted Manifest would wait on it: %v", err)
			}
		})
	}
}
