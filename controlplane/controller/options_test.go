package controller

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
	for ns, want := range map[string]bool{
		"flotilla-system": true, "flotilla-es-member1": true, "kube-system": true, "kube-public": true,
		"default": false, "flotilla": false, "kubernetes-apps": false, "shop": false,
	} {
		if got := reservedNamespace(ns); got != want {
			t.Errorf("reservedNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
}
