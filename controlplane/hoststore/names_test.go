package hoststore

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

func TestScaleTarget(t *testing.T) {
	hpa := func(ref map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]any{"namespace": "shop", "name": "web"}}}
		if ref != nil {
			u.Object["spec"] = map[string]any{"scaleTargetRef": ref}
		}
		return u
	}
	cases := map[string]struct {
		obj    client.Object
		want   client.ObjectKey
		wantOK bool
	}{
		"a Deployment": {
			obj:  hpa(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "Web"}),
			want: client.ObjectKey{Namespace: "shop", Name: "web-deployment.apps"}, wantOK: true,
		},
		"a core kind": {
			obj:  hpa(map[string]any{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc"}),
			want: client.ObjectKey{Namespace: "shop", Name: "rc-replicationcontroller"}, wantOK: true,
		},
		"no scaleTargetRef": {obj: hpa(nil)},
		"no kind":           {obj: hpa(map[string]any{"apiVersion": "apps/v1", "name": "web"})},
		"no name":           {obj: hpa(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"})},
		"a bad apiVersion":  {obj: hpa(map[string]any{"apiVersion": "a/b/c", "kind": "Deployment", "name": "web"})},
		"not unstructured":  {obj: &workv1.ResourceBinding{}},
	}
	for name, tc := range cases {
		got, ok := ScaleTarget(tc.obj)
		if ok != tc.wantOK || got != tc.want {
			t.Errorf("%s: ScaleTarget = %v, %t; want %v, %t", name, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestBindingRef(t *testing.T) {
	cases := map[string]struct {
		meta metav1.ObjectMeta
		want string
	}{
		"namespaced":     {meta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment.apps"}, want: "ResourceBinding shop/web-deployment.apps"},
		"cluster-scoped": {meta: metav1.ObjectMeta{Name: "admin-clusterrole.rbac.authorization.k8s.io"}, want: "ClusterResourceBinding admin-clusterrole.rbac.authorization.k8s.io"},
	}
	for name, tc := range cases {
		if got := BindingRef(&workv1.ResourceBinding{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("%s: BindingRef = %q, want %q", name, got, tc.want)
		}
	}
}
