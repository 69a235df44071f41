package detector

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
)

func TestOthersBinding(t *testing.T) {
	d := &detector{gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}}
	name := "admin-clusterrole.rbac.authorization.k8s.io"
	cases := []struct {
		desc          string
		apiVersion    string
		kind, resName string
		want          bool
	}{
		{"this template's binding", "rbac.authorization.k8s.io/v1", "ClusterRole", "admin", false},
		{"a template named alike (case)", "rbac.authorization.k8s.io/v1", "ClusterRole", "Admin", true},
		{"a resource name edited to another template's", "rbac.authorization.k8s.io/v1", "ClusterRole", "view", false},
		{"another kind", "rbac.authorization.k8s.io/v1", "Role", "Admin", false},
	}
	for _, tc := range cases {
		rb := sharedtest.ClusterBinding(name, tc.apiVersion, tc.kind, tc.resName)
		if got := d.othersBinding(rb, "admin"); got != tc.want {
			t.Errorf("%s: othersBinding = %v, want %v", tc.desc, got, tc.want)
		}
	}
}
