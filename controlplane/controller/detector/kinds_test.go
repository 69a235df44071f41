package detector

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTemplateKinds(t *testing.T) {
	gvk := func(g, v, k string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
	}
	served := []servedKind{
		{gvk("apps", "v1", "Deployment"), true},
		{gvk("", "v1", "Event"), true},
		{gvk("events.k8s.io", "v1", "Event"), true},
		{gvk("coordination.k8s.io", "v1", "Lease"), true},
		{gvk("", "v1", "Node"), false},
		{gvk("work.flotilla.io", "v1alpha1", "ResourceBinding"), true},
		{gvk("fleet.m.flotilla.io", "v1alpha1", "Manifest"), true},
		{gvk("example.com", "v1", "Widget"), false},
		{gvk("example.com", "v1beta1", "Widget"), false},
		{gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"), false},
	}
	preferred := func(gv schema.GroupVersion) bool { return gv.Version == "v1" }
	names := func(list []servedKind) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.GVK.GroupVersion().String()+"/"+s.GVK.Kind)
		}
		return out
	}
	cases := []struct {
		name   string
		filter []schema.GroupVersionKind
		want   []string
	}{
		{"discovery: preferred versions, without events, leases, nodes and flotilla's groups", nil,
			[]string{"apps/v1/Deployment", "example.com/v1/Widget", "rbac.authorization.k8s.io/v1/ClusterRole"}},
		{"filter: exactly the listed versions the host serves", []schema.GroupVersionKind{gvk("example.com", "v1beta1", "Widget"), gvk("", "v1", "Event"), gvk("example.com", "v1", "Gadget")},
			[]string{"v1/Event", "example.com/v1beta1/Widget"}},
	}
	for _, tc := range cases {
		got := names(templateKinds(served, preferred, tc.filter))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
