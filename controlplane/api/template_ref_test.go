package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestTemplateRef(t *testing.T) {
	cases := map[string]struct {
		ref        TemplateRef
		want       string // String
		describe   string // Describe
		apiVersion string // spec.resource.apiVersion
	}{
		"namespaced apps":   {ref: TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}, want: "apps/v1, Kind=Deployment, default/web", describe: "Deployment default/web", apiVersion: "apps/v1"},
		"core group":        {ref: TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "cfg.v2"}, want: "v1, Kind=ConfigMap, kube-system/cfg.v2", describe: "ConfigMap kube-system/cfg.v2", apiVersion: "v1"},
		"cluster-scoped":    {ref: TemplateRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:viewer"}, want: "rbac.authorization.k8s.io/v1, Kind=ClusterRole, system:viewer", describe: "ClusterRole system:viewer", apiVersion: "rbac.authorization.k8s.io/v1"},
		"custom resource":   {ref: TemplateRef{Group: "example.io", Version: "v1beta1", Kind: "Widget", Namespace: "ns", Name: "w"}, want: "example.io/v1beta1, Kind=Widget, ns/w", describe: "Widget ns/w", apiVersion: "example.io/v1beta1"},
		"core cluster kind": {ref: TemplateRef{Version: "v1", Kind: "Namespace", Name: "prod"}, want: "v1, Kind=Namespace, prod", describe: "Namespace prod", apiVersion: "v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.ref.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			parsed, err := ParseTemplateRef(tc.want)
			if err != nil {
				t.Fatalf("ParseTemplateRef(%q): %v", tc.want, err)
			}
			if diff := cmp.Diff(tc.ref, parsed); diff != "" {
				t.Errorf("ParseTemplateRef (-want +got):\n%s", diff)
			}
			if got := tc.ref.Describe(); got != tc.describe {
				t.Errorf("Describe() = %q, want %q", got, tc.describe)
			}
			wire := ObjectReference{APIVersion: tc.apiVersion, Kind: tc.ref.Kind, Namespace: tc.ref.Namespace, Name: tc.ref.Name}
			if diff := cmp.Diff(wire, tc.ref.Resource()); diff != "" {
				t.Errorf("Resource() (-want +got):\n%s", diff)
			}
			wire.UID, wire.ResourceVersion = "uid-1", "42"
			if got := TemplateRefOfResource(wire); got != tc.ref {
				t.Errorf("TemplateRefOfResource(%+v) = %+v, want %+v", wire, got, tc.ref)
			}
			id := tc.ref.ID()
			if len(id) != templateIDLength || len(validation.IsValidLabelValue(id)) > 0 {
				t.Errorf("ID() = %q, want a %d-character label value", id, templateIDLength)
			}
		})
	}
}

func TestParseTemplateRefErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"apps/v1 Kind=Deployment default/web",
		"apps/v1, Deployment, default/web",
		"a/b/c, Kind=Deployment, default/web",
		"apps/v1, Kind=, default/web",
		"apps/v1, Kind=Deployment, default/",
		"apps/v1, Kind=Deployment, /web",
		"apps/v1, Kind=Deployment, a/b/c",
		", Kind=Deployment, web",
	} {
		if ref, err := ParseTemplateRef(s); err == nil {
			t.Errorf("ParseTemplateRef(%q) = %+v, want an error", s, ref)
		}
	}
}

func TestTemplateIDIgnoresVersion(t *testing.T) {
	v1 := TemplateRef{Group: "example.io", Version: "v1", Kind: "Widget", Namespace: "ns", Name: "w"}
	v2 := v1
	v2.Version = "v2"
	if v1.ID() != v2.ID() {
		t.Errorf("ID changed with the version: %s vs %s", v1.ID(), v2.ID())
	}
	if !v1.SameTemplate(v2) {
		t.Errorf("SameTemplate is false across versions: %+v vs %+v", v1, v2)
	}
	other := v1
	other.Namespace = "ns2"
	if v1.SameTemplate(other) {
		t.Errorf("SameTemplate is true across namespaces: %+v vs %+v", v1, other)
	}
	if v1.ID() == other.ID() {
		t.Errorf("templates in different namespaces share ID %s", v1.ID())
	}
}
