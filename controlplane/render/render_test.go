package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/override"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestRenderPrune(t *testing.T) {
	cases := map[string]struct {
		tmpl   *unstructured.Unstructured
		gone   [][]string
		remain map[string]any // dotted path -> value
	}{
		"server metadata and status": {
			tmpl: apitest.MakeDeployment("web", "default").UID("u-1").
				Set("42", "metadata", "resourceVersion").Set(int64(3), "metadata", "generation").
				Set("2024-01-01T00:00:00Z", "metadata", "creationTimestamp").
				Set([]any{map[string]any{"manager": "kubectl"}}, "metadata", "managedFields").
				Set([]any{map[string]any{"kind": "X", "name": "o"}}, "metadata", "ownerReferences").
				Set([]any{"example.io/keep"}, "metadata", "finalizers").
				Set("/apis/apps/v1/x", "metadata", "selfLink").
				Set(int64(30), "metadata", "deletionGracePeriodSeconds").
				Set("2024-01-02T00:00:00Z", "metadata", "deletionTimestamp").
				Set(map[string]any{"readyReplicas": int64(1)}, "status").Obj(),
			gone: [][]string{
				{"metadata", "uid"}, {"metadata", "resourceVersion"}, {"metadata", "generation"}, {"metadata", "creationTimestamp"},
				{"metadata", "managedFields"}, {"metadata", "ownerReferences"}, {"metadata", "finalizers"}, {"metadata", "selfLink"},
				{"metadata", "deletionGracePeriodSeconds"}, {"metadata", "deletionTimestamp"}, {"status"},
			},
			remain: map[string]any{"metadata.name": "web", "spec.replicas": int64(1)},
		},
		"service cluster IP": {
			tmpl: apitest.MakeTemplate("v1", "Service", "svc", "default").Set("10.0.0.7", "spec", "clusterIP").
				Set([]any{"10.0.0.7"}, "spec", "clusterIPs").Set("ClusterIP", "spec", "type").Obj(),
			gone:   [][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}},
			remain: map[string]any{"spec.type": "ClusterIP"},
		},
		"headless service keeps None": {
			tmpl:   apitest.MakeTemplate("v1", "Service", "svc", "default").Set("None", "spec", "clusterIP").Obj(),
			remain: map[string]any{"spec.clusterIP": "None"},
		},
		"job generated selector and ttl": {
			tmpl: apitest.MakeJob("j", "default").
				Set(map[string]any{"controller-uid": "u", "batch.kubernetes.io/controller-uid": "u"}, "spec", "selector", "matchLabels").
				Set(map[string]any{"controller-uid": "u", "job-name": "j", "batch.kubernetes.io/job-name": "j", "team": "a"}, "spec", "template", "metadata", "labels").
				Set(int64(100), "spec", "ttlSecondsAfterFinished").Obj(),
			gone:   [][]string{{"spec", "selector"}, {"spec", "ttlSecondsAfterFinished"}},
			remain: map[string]any{"spec.template.metadata.labels": map[string]any{"team": "a"}},
		},
		"job manual selector kept": {
			tmpl: apitest.MakeJob("j", "default").Set(true, "spec", "manualSelector").
				Set(map[string]any{"controller-uid": "mine"}, "spec", "selector", "matchLabels").Obj(),
			remain: map[string]any{"spec.selector.matchLabels": map[string]any{"controller-uid": "mine"}},
		},
		"service account token secrets": {
			tmpl: apitest.MakeTemplate("v1", "ServiceAccount", "sa", "default").
				Set([]any{map[string]any{"name": "sa-token-abcde"}, map[string]any{"name": "pull-secret"}}, "secrets").Obj(),
			remain: map[string]any{"secrets": []any{map[string]any{"name": "pull-secret"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.tmpl.DeepCopy()
			obj := mustRender(t, divided(tc.tmpl, targets("a", 1)))["a"].Object
			for _, path := range tc.gone {
				if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, path...); found {
					t.Errorf("%v survived", path)
				}
			}
			for path, want := range tc.remain {
				if diff := cmp.Diff(want, field(t, obj, strings.Split(path, ".")...)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
			}
			if diff := cmp.Diff(before.Object, tc.tmpl.Object); diff != "" {
				t.Errorf("Render changed the template (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRenderOverridesPerCluster(t *testing.T) {
	tmpl := apitest.MakeDeployment("web", "default").Replicas(3).Image("web:1.4").Obj()
	eu := apitest.MakeOverridePolicy("eu-registry", "default").SelectKind("apps/v1", "Deployment").
		Image(apitest.MakeAffinity().Names("west").Obj(), api.Registry, api.OverriderOpReplace, "registry.eu.example.com").Obj()
	// Overrides run after replica revision, so this pin wins in west.
	pin := apitest.MakeClusterOverridePolicy("pin").
		Plaintext(apitest.MakeAffinity().Names("west").Obj(), "/spec/replicas", api.OverriderOpReplace, "5").ClusterObj()
	in := divided(tmpl, targets("east", 1, "west", 2))
	in.Overrides = policy.MatchOverrides(tmpl, []api.OverridePolicy{*eu}, []api.ClusterOverridePolicy{*pin})
	works := mustRender(t, in)
	type view struct {
		Image    any
		Replicas any
		Rules    []string
	}
	got := map[string]view{}
	for name, w := range works {
		containers := field(t, w.Object, "spec", "template", "spec", "containers").([]any)
		v := view{Image: containers[0].(map[string]any)["image"], Replicas: field(t, w.Object, "spec", "replicas")}
		for _, r := range w.Applied.Rules {
			v.Rules = append(v.Rules, r.Policy())
		}
		got[name] = v
	}
	want := map[string]view{
		"east": {Image: "web:1.4", Replicas: int64(1)},
		"west": {Image: "registry.eu.example.com/web:1.4", Replicas: int64(5), Rules: []string{"ClusterOverridePolicy pin", "OverridePolicy default/eu-registry"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("works (-want +got):\n%s", diff)
	}
}

// TestRenderGolden pins the rendered bytes of a small object, so any change
// to pruning, stamping or encoding shows up here.
func TestRenderGolden(t *testing.T) {
	tmpl := apitest.MakeConfigMap("cfg", "default").UID("u").Data("b", "2").Data("a", "<1>").Label("z", "last").Obj()
	w := mustRender(t, Input{Template: tmpl, Clusters: targets("east", 0), Fleet: "prod"})["east"]
	got, err := CanonicalJSON(w.Object)
	if err != nil {
		t.Fatal(err)
	}
	ref := api.TemplateRefOf(tmpl)
	want := `{"apiVersion":"v1","data":{"a":"\u003c1\u003e","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{` +
		`"flotilla.io/rendered-hash":"` + w.Hash + `","flotilla.io/template":"v1, Kind=ConfigMap, default/cfg"},` +
		`"labels":{"app.kubernetes.io/managed-by":"flotilla","flotilla.io/fleet":"prod","flotilla.io/template-id":"` + ref.ID() + `","z":"last"},` +
		`"name":"cfg","namespace":"default"}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("canonical JSON (-want +got):\n%s", diff)
	}
	const wantID = "de2b14cf969dccf0" // sha256("/ConfigMap/default/cfg")[:16]
	if ref.ID() != wantID {
		t.Errorf("template ID = %s, want %s (IDs must never change: members are labelled with them)", ref.ID(), wantID)
	}
}

func TestRenderDeterministic(t *testing.T) {
	build := func() Input {
		tmpl := apitest.MakeDeployment("web", "default").Replicas(10).Image("web:1.4").
			Label("b", "2").Label("a", "1").Annotation("y", "2").Annotation("x", "1").Obj()
		in := divided(tmpl, targets("c", 3, "a", 3, "b", 4))
		in.Overrides = policy.MatchOverrides(tmpl, []api.OverridePolicy{*benchPolicy()}, []api.ClusterOverridePolicy{*benchClusterPolicy()})
		return in
	}
	encode := func(works map[string]Work) []byte {
		var buf bytes.Buffer
		for _, name := range []string{"a", "b", "c"} {
			b, err := CanonicalJSON(works[name].Object)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		return buf.Bytes()
	}
	first := encode(mustRender(t, build()))
	for i := 0; i < 20; i++ {
		if again := encode(mustRender(t, build())); !bytes.Equal(first, again) {
			t.Fatalf("render %d differs:\n%s\nvs\n%s", i, first, again)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	deploy := apitest.MakeDeployment("web", "default").Obj()
	badImage := apitest.MakeOverridePolicy("bad", "default").Image(apitest.MakeAffinity().Names("west").Obj(), api.Tag, api.OverriderOpReplace, "not a tag").Obj()
	cases := map[string]struct {
		in   Input
		want string
	}{
		"nil template":     {in: Input{Fleet: "prod"}, want: "render: template is nil"},
		"no kind":          {in: Input{Template: apitest.MakeTemplate("v1", "", "x", "").Obj(), Fleet: "prod"}, want: "apiVersion, kind and metadata.name must be set"},
		"empty fleet":      {in: Input{Template: deploy}, want: "render apps/v1, Kind=Deployment, default/web: fleet is empty"},
		"fleet with slash": {in: Input{Template: deploy, Fleet: "a/b"}, want: `fleet "a/b" is not a valid label value`},
		"unknown type":     {in: Input{Template: deploy, Fleet: "prod", ReplicaScheduling: "Split"}, want: `unknown replica scheduling type "Split"`},
		"duplicate":        {in: Input{Template: deploy, Fleet: "prod", Clusters: targets("a", 1, "a", 2)}, want: "cluster a is listed twice"},
		"nil cluster":      {in: Input{Template: deploy, Fleet: "prod", Clusters: []Target{{}}}, want: "cluster 0 has no name"},
		"negative":         {in: Input{Template: deploy, Fleet: "prod", Clusters: targets("a", -1)}, want: "cluster a has negative replicas -1"},
		"customization": {in: Input{Template: apitest.MakeTemplate("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", "rollout", "").Obj(), Fleet: "prod", Clusters: targets("a", 0)},
			want: "render config.karmada.io/v1alpha1, Kind=ResourceInterpreterCustomization, rollout: a ResourceInterpreterCustomization teaches flotilla a kind and is not a template to propagate"},
		"override failure": {
			in: Input{Template: deploy, Fleet: "prod", Clusters: targets("east", 1, "west", 1),
				Overrides: policy.MatchOverrides(deploy, []api.OverridePolicy{*badImage}, nil)},
			want: `render apps/v1, Kind=Deployment, default/web for cluster west: OverridePolicy default/bad spec.overrideRules[0].overriders.imageOverrider[0] at /spec/template/spec/containers/0/image: override tag of image "nginx": "not a tag" is neither a valid tag nor a digest`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			works, err := Render(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render = %d works, %v; want error containing %q", len(works), err, tc.want)
			}
		})
	}
	_, err := Render(cases["override failure"].in)
	var oe *override.Error
	if !errors.As(err, &oe) || oe.Path != "/spec/template/spec/containers/0/image" {
		t.Errorf("override failure does not unwrap to *override.Error with the image path: %v", err)
	}
}
