package render

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

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
	ref := api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
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

// TestRenderStripsReservedKeys: flotilla's own labels and annotations
// never reach a rendered object from the template, an override or a
// failover's preserved labels; other domains (Karmada's, the user's) do.
func TestRenderStripsReservedKeys(t *testing.T) {
	tmpl := apitest.MakeConfigMap("c", "ns").Data("k", "v").
		Label("app", "web").
		Label("resourcebinding.flotilla.io/permanent-id", "forged").
		Label("notflotilla.io/kept", "yes").
		Annotation("flotilla.io/adopted", "true").
		Annotation("work.flotilla.io/conflict-resolution", "Overwrite").
		Annotation("rollout.flotilla.io/resume", "1").
		Annotation("resourcetemplate.karmada.io/retain-replicas", "true").
		Annotation(AnnotationTemplate, "v1, Kind=ConfigMap, other/victim").Obj()
	mark := apitest.MakeOverridePolicy("mark", "ns").Rule(nil, api.Overriders{
		AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"flotilla.io/adopted": "true", "team": "a"}}},
	}).Obj()
	ts := targets("east", 1)
	ts[0].Labels = map[string]string{"failover.flotilla.io/unhealthy-since": "x", "preserved": "yes"}
	w := mustRender(t, Input{Template: tmpl, Clusters: ts, Overrides: policy.MatchOverrides(tmpl, []api.OverridePolicy{*mark}, nil), Fleet: "prod"})["east"]
	ref := api.TemplateRefOf(tmpl)
	wantLabels := map[string]string{
		"app": "web", "notflotilla.io/kept": "yes", "preserved": "yes",
		LabelManagedBy: ManagedByFlotilla, LabelFleet: "prod", LabelTemplateID: ref.ID(),
	}
	if diff := cmp.Diff(wantLabels, w.Object.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{
		"resourcetemplate.karmada.io/retain-replicas": "true", "team": "a", "rollout.flotilla.io/resume": "1",
		AnnotationTemplate: ref.String(), AnnotationRenderedHash: w.Hash,
	}
	if diff := cmp.Diff(wantAnnotations, w.Object.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestReserved(t *testing.T) {
	for key, want := range map[string]bool{
		"flotilla.io/adopted":                      true,
		"resourcebinding.flotilla.io/permanent-id": true,
		"fleet.m.flotilla.io/owner":                true,
		LabelManagedBy:                             true,
		"flotilla.io":                              false,
		"notflotilla.io/x":                         false,
		"flotilla.io.example.com/x":                false,
		"propagationpolicy.karmada.io/name":        false,
		"app":                                      false,
		"rollout.flotilla.io/resume":               false,
		"apps.example.flotilla.io/cluster":         false,
		"work.flotilla.io/verified-generation":     true,
	} {
		if got := Reserved(key); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestReservedCoversEveryKey: every flotilla.io label or annotation key
// that the project's code names is Reserved (but the resume request), so a
// key added in a new subdomain cannot be forged from a template unnoticed.
func TestReservedCoversEveryKey(t *testing.T) {
	root := "../.."
	key := regexp.MustCompile(`"((?:[a-z0-9-]+\.)*flotilla\.io/[A-Za-z0-9._-]+)"`)
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "examples" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range key.FindAllStringSubmatch(string(src), -1) {
			found++
			if k := m[1]; !Reserved(k) && k != annotationRolloutResume {
				t.Errorf("%s names %q, which Reserved does not cover: add its subdomain to reservedSubdomains", path, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 20 {
		t.Fatalf("found only %d flotilla.io keys under %s: the walk is broken", found, root)
	}
}
