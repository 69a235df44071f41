package shared

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseTemplateKinds(t *testing.T) {
	cases := []struct {
		in      string
		want    []schema.GroupVersionKind
		wantErr string
	}{
		{"apps/v1/Deployment, v1/ConfigMap,example.com/v1beta1/Widget", []schema.GroupVersionKind{
			{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "ConfigMap"}, {Group: "example.com", Version: "v1beta1", Kind: "Widget"},
		}, ""},
		{"Deployment", nil, `template kind "Deployment": want group/version/Kind`},
		{"a/b/c/d", nil, `template kind "a/b/c/d"`},
		{"/v1/Widget", nil, `template kind "/v1/Widget"`},
		{"v1/", nil, `template kind "v1/"`},
		{" , ", nil, "name at least one kind"},
	}
	for _, tc := range cases {
		got, err := ParseTemplateKinds(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestReservedNamespace(t *testing.T) {
	custom := Options{ReservedNamespaces: []string{"istio-*", "shop"}}
	cases := []struct {
		opts Options
		ns   string
		want bool
	}{
		{Options{}, "flotilla-system", true},
		{Options{}, "flotilla-es-member1", true},
		{Options{}, "kube-system", true},
		{Options{}, "kube-public", true},
		{Options{}, "kube-node-lease", true},
		{Options{}, "default", false},
		{Options{}, "flotilla", false},
		{Options{}, "kubernetes-apps", false},
		{Options{}, "istio-system", false},
		// A custom list replaces the defaults, but the execution
		// namespaces stay reserved.
		{custom, "istio-system", true},
		{custom, "shop", true},
		{custom, "shopping", false},
		{custom, "kube-system", false},
		{custom, "flotilla-es-member1", true},
	}
	for _, tc := range cases {
		if got := tc.opts.Reserved(tc.ns); got != tc.want {
			t.Errorf("Options%v.Reserved(%q) = %v, want %v", tc.opts.ReservedNamespaces, tc.ns, got, tc.want)
		}
	}
}

func TestParseReservedNamespaces(t *testing.T) {
	got, err := ParseReservedNamespaces(" kube-*, flotilla-system ,istio-system,")
	if err != nil || !slices.Equal(got, []string{"kube-*", "flotilla-system", "istio-system"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "*", "a*b", "**"} {
		if _, err := ParseReservedNamespaces(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
