package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestTemplateRef(t *testing.T) {
	cases := map[string]struct {
		ref  TemplateRef
		want string
	}{
		"namespaced apps":   {ref: TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}, want: "apps/v1, Kind=Deployment, default/web"},
		"core group":        {ref: TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "cfg.v2"}, want: "v1, Kind=ConfigMap, kube-system/cfg.v2"},
		"cluster-scoped":    {ref: TemplateRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:viewer"}, want: "rbac.authorization.k8s.io/v1, Kind=ClusterRole, system:viewer"},
		"custom resource":   {ref: TemplateRef{Group: "example.io", Version: "v1beta1", Kind: "Widget", Namespace: "ns", Name: "w"}, want: "example.io/v1beta1, Kind=Widget, ns/w"},
		"core cluster kind": {ref: TemplateRef{Version: "v1", Kind: "Namespace", Name: "prod"}, want: "v1, Kind=Namespace, prod"},
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
	other := v1
	other.Namespace = "ns2"
	if v1.ID() == other.ID() {
		t.Errorf("templates in different namespaces share ID %s", v1.ID())
	}
}

func TestRenderOwnership(t *testing.T) {
	tmpl := apitest.MakeDeployment("web", "default").Label("app", "web").
		Label(LabelFleet, "forged").Annotation(AnnotationRenderedHash, "forged").Obj()
	// An override that tries to drop the ownership labels must not win.
	strip := apitest.MakeOverridePolicy("strip", "default").Rule(nil, api.Overriders{
		LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpRemove, Value: map[string]string{LabelManagedBy: "", LabelTemplateID: ""}}},
	}).Obj()
	in := Input{
		Template:  tmpl,
		Clusters:  targets("east", 1),
		Overrides: policy.MatchOverrides(tmpl, []api.OverridePolicy{*strip}, nil),
		Fleet:     "prod",
	}
	w := mustRender(t, in)["east"]
	ref := TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	wantLabels := map[string]string{
		"app":           "web",
		LabelManagedBy:  ManagedByFlotilla,
		LabelFleet:      "prod",
		LabelTemplateID: ref.ID(),
	}
	if diff := cmp.Diff(wantLabels, w.Object.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	annotations := w.Object.GetAnnotations()
	if annotations[AnnotationTemplate] != "apps/v1, Kind=Deployment, default/web" {
		t.Errorf("template annotation = %q", annotations[AnnotationTemplate])
	}
	hash, err := RenderedHash(w.Object)
	if err != nil {
		t.Fatal(err)
	}
	if annotations[AnnotationRenderedHash] != hash || w.Hash != hash || len(hash) != 64 {
		t.Errorf("rendered hash annotation %q, Work.Hash %q, recomputed %q: want all equal sha256 hex", annotations[AnnotationRenderedHash], w.Hash, hash)
	}
	if len(w.Applied.Rules) != 1 || w.Applied.Rules[0].Name != "strip" {
		t.Errorf("applied = %+v, want the strip policy's rule", w.Applied)
	}
}

func TestRenderedHashChangesWithContent(t *testing.T) {
	base := mustRender(t, Input{Template: apitest.MakeConfigMap("c", "ns").Data("k", "v").Obj(), Clusters: targets("a", 0), Fleet: "prod"})["a"].Hash
	for name, in := range map[string]Input{
		"data":  {Template: apitest.MakeConfigMap("c", "ns").Data("k", "w").Obj(), Clusters: targets("a", 0), Fleet: "prod"},
		"fleet": {Template: apitest.MakeConfigMap("c", "ns").Data("k", "v").Obj(), Clusters: targets("a", 0), Fleet: "dev"},
	} {
		if got := mustRender(t, in)["a"].Hash; got == base {
			t.Errorf("changing %s kept hash %s", name, got)
		}
	}
}

func TestRenderedHashWithoutOtherAnnotations(t *testing.T) {
	plain := apitest.MakeConfigMap("c", "ns").Obj()
	stamped := apitest.MakeConfigMap("c", "ns").Annotation(AnnotationRenderedHash, "x").Obj()
	a, err := RenderedHash(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RenderedHash(stamped)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("hash with only a hash annotation = %s, want the plain object's %s", b, a)
	}
	if !strings.Contains(string(must(CanonicalJSON(stamped))), AnnotationRenderedHash) {
		t.Error("RenderedHash modified its argument")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
