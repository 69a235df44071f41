package execution

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

func TestGroupsOrder(t *testing.T) {
	ref := func(apiVersion, kind, namespace, name string) api.TemplateRef {
		return api.TemplateRefOf(apitest.MakeTemplate(apiVersion, kind, name, namespace).Obj())
	}
	var (
		deploy = ref("apps/v1", "Deployment", "app", "web")
		cm     = ref("v1", "ConfigMap", "app", "cfg")
		ns     = ref("v1", "Namespace", "", "app")
		crd    = ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.flotilla.test")
		role   = ref("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")
		widget = ref("flotilla.test/v1", "Widget", "app", "w")
	)
	ops := []op{
		{kind: opPrune, ref: crd}, {kind: opApply, ref: widget}, {kind: opApply, ref: deploy},
		{kind: opPrune, ref: cm}, {kind: opApply, ref: role}, {kind: opApply, ref: crd}, {kind: opApply, ref: ns},
		{kind: opDelete, ref: ns},
	}
	var got [][]string
	for _, g := range groups(ops) {
		var names []string
		for _, o := range g.ops {
			names = append(names, o.verb()+" "+o.ref.Describe())
		}
		got = append(got, names)
	}
	want := [][]string{
		{"apply Namespace app"},
		{"apply CustomResourceDefinition widgets.flotilla.test"},
		{"apply ClusterRole reader"},
		{"apply Deployment app/web", "apply Widget app/w"},
		{"prune ConfigMap app/cfg"},
		{"prune CustomResourceDefinition widgets.flotilla.test"},
		{"delete Namespace app"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func TestOwnerOf(t *testing.T) {
	ref := api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	nsRef := api.TemplateRef{Version: "v1", Kind: "Namespace", Name: "app"}
	live := func(labels, annotations map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{}}
		o.SetLabels(labels)
		o.SetAnnotations(annotations)
		return o
	}
	flotilla := func(fleet string) map[string]string {
		return map[string]string{render.LabelManagedBy: render.ManagedByFlotilla, render.LabelFleet: fleet}
	}
	tmpl := func(s string) map[string]string { return map[string]string{render.AnnotationTemplate: s} }
	cases := map[string]struct {
		live *unstructured.Unstructured
		ref  api.TemplateRef
		want owner
	}{
		"this fleet and template":        {live(flotilla("prod"), tmpl("apps/v1, Kind=Deployment, default/web")), ref, ownedByTemplate},
		"another api version":            {live(flotilla("prod"), tmpl("apps/v1beta2, Kind=Deployment, default/web")), ref, ownedByTemplate},
		"another template's annotation":  {live(flotilla("prod"), tmpl("apps/v1, Kind=Deployment, default/api")), ref, notOwned},
		"annotation that does not parse": {live(flotilla("prod"), tmpl("web")), ref, notOwned},
		"no template annotation":         {live(flotilla("prod"), nil), ref, notOwned},
		"another fleet":                  {live(flotilla("staging"), tmpl("apps/v1, Kind=Deployment, default/web")), ref, ownedByOtherFleet},
		"managed-by without fleet":       {live(map[string]string{render.LabelManagedBy: render.ManagedByFlotilla}, nil), ref, notOwned},
		"managed by helm":                {live(map[string]string{render.LabelManagedBy: "Helm", render.LabelFleet: "prod"}, tmpl("apps/v1, Kind=Deployment, default/web")), ref, notOwned},
		"no labels":                      {live(nil, nil), ref, notOwned},
		"namespace flotilla created":     {live(flotilla("prod"), nil), nsRef, implicitNamespace},
		"namespace of another fleet":     {live(flotilla("staging"), nil), nsRef, ownedByOtherFleet},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ownerOf(tc.live, "prod", tc.ref); got != tc.want {
				t.Errorf("ownerOf = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestInvalidRequests checks that bad input fails on the op it concerns,
// before any request to a cluster: the clusters here are not connected.
func TestInvalidRequests(t *testing.T) {
	tmpl := apitest.MakeConfigMap("cfg", "app").Obj()
	ref := api.TemplateRefOf(tmpl)
	ok := func() map[string]*unstructured.Unstructured { return rendered(t, testFleet, tmpl, "east") }
	cases := map[string]struct {
		reqs []ApplyRequest
		want []string // per outcome, a part of its error
	}{
		"rendered for another fleet": {
			reqs: []ApplyRequest{{Template: ref, Objects: rendered(t, "staging", tmpl, "east")}},
			want: []string{`apply ConfigMap app/cfg to cluster east: object lacks the ownership labels and annotations of fleet "prod"`},
		},
		"not rendered at all": {
			reqs: []ApplyRequest{{Template: ref, Objects: map[string]*unstructured.Unstructured{"east": tmpl}}},
			want: []string{"object lacks the ownership labels"},
		},
		"another object than the template": {
			reqs: []ApplyRequest{{Template: api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "other"}, Objects: ok()}},
			want: []string{"object is v1, Kind=ConfigMap, app/cfg, not the template v1, Kind=ConfigMap, app/other"},
		},
		"applied and pruned in one cluster": {
			reqs: []ApplyRequest{{Template: ref, Objects: ok(), Prune: []string{"east"}}},
			want: []string{"the cluster is listed both to apply and to prune"},
		},
		"unknown conflict resolution": {
			reqs: []ApplyRequest{{Template: ref, Objects: ok(), ConflictResolution: "Merge"}},
			want: []string{`conflict resolution "Merge": want "Abort" or "Overwrite"`},
		},
		"template without a kind": {
			reqs: []ApplyRequest{{Template: api.TemplateRef{Version: "v1", Name: "x"}, Prune: []string{"east"}}},
			want: []string{"prune  x from cluster east: template"},
		},
		"one object twice in a batch": {
			reqs: []ApplyRequest{{Template: ref, Objects: ok()}, {Template: ref, Prune: []string{"east"}}},
			want: []string{"not attempted, cannot connect: not connected", "the object appears more than once in the batch"},
		},
	}
	ex := &Executor{Clusters: Targets{}, Fleet: testFleet}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := ex.ApplyBatch(t.Context(), tc.reqs)
			if len(res.Outcomes) != len(tc.want) {
				t.Fatalf("got %d outcomes, want %d:%s", len(res.Outcomes), len(tc.want), summary(res))
			}
			for i, o := range res.Outcomes {
				if o.Action != ActionFailed || o.Err == nil || !strings.Contains(o.Err.Error(), tc.want[i]) {
					t.Errorf("outcome %d: %s %v, want Failed with %q", i, o.Action, o.Err, tc.want[i])
				}
			}
		})
	}
}

func TestMisconfiguredExecutorFailsEveryObject(t *testing.T) {
	tmpl := apitest.MakeConfigMap("cfg", "app").Obj()
	for name, ex := range map[string]*Executor{
		"no clusters": {Fleet: testFleet},
		"no fleet":    {Clusters: Targets{}},
	} {
		t.Run(name, func(t *testing.T) {
			res := ex.Apply(t.Context(), applyReq(t, tmpl, "east", "west"))
			if len(res.Outcomes) != 2 {
				t.Fatalf("got %d outcomes, want 2", len(res.Outcomes))
			}
			for _, o := range res.Outcomes {
				if o.Action != ActionFailed || !errors.Is(o.Err, errMisconfigured) {
					t.Errorf("%s: %s %v, want Failed as misconfigured", o.Cluster, o.Action, o.Err)
				}
			}
			obs := ex.ObserveLive(t.Context(), []ObserveRequest{{Cluster: "east", Object: tmpl}})
			if !errors.Is(obs[0].Err, errMisconfigured) {
				t.Errorf("observe: %v, want misconfigured", obs[0].Err)
			}
		})
	}
}

func TestUnconnectedClusterFailsItsObjects(t *testing.T) {
	tmpl := apitest.MakeConfigMap("cfg", "app").Obj()
	ex := &Executor{Clusters: Targets{}, Fleet: testFleet}
	res := ex.Apply(t.Context(), applyReq(t, tmpl, "east", "west"))
	want := []string{
		"apply ConfigMap app/cfg to cluster east: not attempted, cannot connect: not connected",
		"apply ConfigMap app/cfg to cluster west: not attempted, cannot connect: not connected",
	}
	var got []string
	for _, o := range res.Outcomes {
		got = append(got, o.Err.Error())
		if !errors.Is(o.Err, api.ErrNotConnected) {
			t.Errorf("%s: error does not wrap api.ErrNotConnected", o.Cluster)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
