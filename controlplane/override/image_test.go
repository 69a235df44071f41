package override

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestOverrideImage(t *testing.T) {
	reg, repo, tag := api.Registry, api.Repository, api.Tag
	add, rm, rep := api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace
	cases := map[string]struct {
		image   string
		o       api.ImageOverrider
		want    string
		wantErr string
	}{
		// Registry.
		"registry replace without registry": {image: "nginx:1.27", o: api.ImageOverrider{Component: reg, Operator: rep, Value: "registry.eu.example.com"}, want: "registry.eu.example.com/nginx:1.27"},
		"registry replace with registry":    {image: "docker.io/library/nginx:1.27", o: api.ImageOverrider{Component: reg, Operator: rep, Value: "mirror.example:5000"}, want: "mirror.example:5000/library/nginx:1.27"},
		"registry add appends text":         {image: "registry.k8s.io/pause:3.10", o: api.ImageOverrider{Component: reg, Operator: add, Value: ".cn"}, want: "registry.k8s.io.cn/pause:3.10"},
		"registry add without registry":     {image: "nginx", o: api.ImageOverrider{Component: reg, Operator: add, Value: "quay.io"}, want: "quay.io/nginx"},
		"registry remove":                   {image: "quay.io/org/app:v1", o: api.ImageOverrider{Component: reg, Operator: rm}, want: "org/app:v1"},
		"registry remove without registry":  {image: "org/app:v1", o: api.ImageOverrider{Component: reg, Operator: rm}, want: "org/app:v1"},
		"registry keeps digest pin":         {image: "nginx:1.27@" + digestA, o: api.ImageOverrider{Component: reg, Operator: rep, Value: "reg.io"}, want: "reg.io/nginx:1.27@" + digestA},
		"registry replace with digest only": {image: "nginx@" + digestA, o: api.ImageOverrider{Component: reg, Operator: rep, Value: "reg.io"}, want: "reg.io/nginx@" + digestA},
		// Repository.
		"repository replace":        {image: "reg.io/team/web:1.4", o: api.ImageOverrider{Component: repo, Operator: rep, Value: "mirror/web"}, want: "reg.io/mirror/web:1.4"},
		"repository add":            {image: "reg.io/web:1.4", o: api.ImageOverrider{Component: repo, Operator: add, Value: "-debug"}, want: "reg.io/web-debug:1.4"},
		"repository replace no tag": {image: "web", o: api.ImageOverrider{Component: repo, Operator: rep, Value: "other"}, want: "other"},
		"repository remove invalid": {image: "reg.io/web:1.4", o: api.ImageOverrider{Component: repo, Operator: rm}, wantErr: "gives an invalid image"},
		"repository upper-case":     {image: "web:1", o: api.ImageOverrider{Component: repo, Operator: rep, Value: "Web"}, wantErr: "must be lowercase"},
		// Tag.
		"tag replace":                {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rep, Value: "1.28"}, want: "nginx:1.28"},
		"tag replace without tag":    {image: "reg.io:443/nginx", o: api.ImageOverrider{Component: tag, Operator: rep, Value: "1.28"}, want: "reg.io:443/nginx:1.28"},
		"tag add appends":            {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: add, Value: "-alpine"}, want: "nginx:1.27-alpine"},
		"tag add without tag":        {image: "nginx", o: api.ImageOverrider{Component: tag, Operator: add, Value: "latest"}, want: "nginx:latest"},
		"tag remove":                 {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rm}, want: "nginx"},
		"tag remove keeps digest":    {image: "nginx:1.27@" + digestA, o: api.ImageOverrider{Component: tag, Operator: rm}, want: "nginx@" + digestA},
		"tag remove of digest":       {image: "nginx@" + digestA, o: api.ImageOverrider{Component: tag, Operator: rm}, want: "nginx"},
		"tag replace drops digest":   {image: "nginx:1.27@" + digestA, o: api.ImageOverrider{Component: tag, Operator: rep, Value: "1.28"}, want: "nginx:1.28"},
		"tag replace with digest":    {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rep, Value: digestB}, want: "nginx@" + digestB},
		"tag replace digest by tag":  {image: "reg.io/nginx@" + digestA, o: api.ImageOverrider{Component: tag, Operator: rep, Value: "v2"}, want: "reg.io/nginx:v2"},
		"tag replace invalid":        {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rep, Value: "not a tag"}, wantErr: "neither a valid tag nor a digest"},
		"tag replace empty":          {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rep}, wantErr: "neither a valid tag nor a digest"},
		"tag replace bad digest":     {image: "nginx:1.27", o: api.ImageOverrider{Component: tag, Operator: rep, Value: "md5:" + sha256Hex}, wantErr: "unsupported digest algorithm"},
		"unknown component":          {image: "nginx", o: api.ImageOverrider{Component: "Name", Operator: rep, Value: "x"}, wantErr: `unknown image component "Name"`},
		"unknown operator":           {image: "nginx", o: api.ImageOverrider{Component: tag, Operator: "append", Value: "x"}, wantErr: `unknown operator "append"`},
		"unparseable current image":  {image: "NGINX", o: api.ImageOverrider{Component: tag, Operator: rep, Value: "x"}, wantErr: "must be lowercase"},
		"registry replace bad value": {image: "nginx", o: api.ImageOverrider{Component: reg, Operator: rep, Value: "bad host"}, wantErr: "gives an invalid image"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := overrideImage(tc.image, tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("overrideImage(%q) = %q, %v; want error containing %q", tc.image, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("overrideImage(%q): %v", tc.image, err)
			}
			if got != tc.want {
				t.Errorf("overrideImage(%q) = %q, want %q", tc.image, got, tc.want)
			}
		})
	}
}

func TestImageOverriderWorkloads(t *testing.T) {
	mirror := api.ImageOverrider{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "mirror.io"}
	type image struct {
		list  string
		index int
		want  string
	}
	cases := map[string]struct {
		obj     *unstructured.Unstructured
		podSpec []string
		want    []image
	}{
		"deployment containers and init containers": {
			obj:     apitest.MakeDeployment("web", "default").Image("nginx:1.27").Container("sidecar", "envoyproxy/envoy:v1.30").InitContainer("init", "busybox").Obj(),
			podSpec: templateSpec,
			want: []image{
				{"containers", 0, "mirror.io/nginx:1.27"},
				{"containers", 1, "mirror.io/envoyproxy/envoy:v1.30"},
				{"initContainers", 0, "mirror.io/busybox"},
			},
		},
		"statefulset":  {obj: apitest.MakeStatefulSet("db", "default").Image("postgres:16").Obj(), podSpec: templateSpec, want: []image{{"containers", 0, "mirror.io/postgres:16"}}},
		"replicaset":   {obj: apitest.MakeReplicaSet("rs", "default").Obj(), podSpec: templateSpec, want: []image{{"containers", 0, "mirror.io/nginx"}}},
		"daemonset":    {obj: apitest.MakeDaemonSet("ds", "default").Obj(), podSpec: templateSpec, want: []image{{"containers", 0, "mirror.io/nginx"}}},
		"job":          {obj: apitest.MakeJob("j", "default").Obj(), podSpec: templateSpec, want: []image{{"containers", 0, "mirror.io/busybox"}}},
		"cronjob":      {obj: apitest.MakeCronJob("cj", "default").InitContainer("init", "alpine:3").Obj(), podSpec: cronSpec, want: []image{{"containers", 0, "mirror.io/busybox"}, {"initContainers", 0, "mirror.io/alpine:3"}}},
		"pod":          {obj: apitest.MakePod("p", "default").Obj(), podSpec: podSpec, want: []image{{"containers", 0, "mirror.io/nginx"}}},
		"unknown kind": {obj: apitest.MakeTemplate("example.io/v1", "Widget", "w", "default").Set("nginx", "spec", "image").Obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, tc.obj, api.Overriders{ImageOverrider: []api.ImageOverrider{mirror}})
			if len(tc.want) == 0 {
				if diff := cmp.Diff(tc.obj.Object, got.Object); diff != "" {
					t.Errorf("kind without a known pod spec changed (-before +after):\n%s", diff)
				}
				return
			}
			for _, w := range tc.want {
				if img := containerField(t, got, tc.podSpec, w.list, w.index, "image"); img != w.want {
					t.Errorf("%s[%d].image = %v, want %q", w.list, w.index, img, w.want)
				}
			}
		})
	}
}

func TestImageOverriderPredicate(t *testing.T) {
	obj := apitest.MakeDeployment("web", "default").Image("nginx:1.27").Container("sidecar", "envoy:v1").Obj()
	got := mustApplyRule(t, obj, api.Overriders{ImageOverrider: []api.ImageOverrider{{
		Predicate: &api.ImagePredicate{Path: "/spec/template/spec/containers/1/image"},
		Component: api.Tag, Operator: api.OverriderOpReplace, Value: "v2",
	}}})
	if img := containerField(t, got, templateSpec, "containers", 1, "image"); img != "envoy:v2" {
		t.Errorf("predicate target image = %v, want envoy:v2", img)
	}
	if img := containerField(t, got, templateSpec, "containers", 0, "image"); img != "nginx:1.27" {
		t.Errorf("image outside the predicate = %v, want it unchanged", img)
	}

	// A predicate reaches images of any kind, not only the well-known ones.
	widget := apitest.MakeTemplate("example.io/v1", "Widget", "w", "default").Set("nginx:1", "spec", "runner", "image").Obj()
	got = mustApplyRule(t, widget, api.Overriders{ImageOverrider: []api.ImageOverrider{{
		Predicate: &api.ImagePredicate{Path: "/spec/runner/image"},
		Component: api.Registry, Operator: api.OverriderOpAdd, Value: "reg.io",
	}}})
	if img := nested(t, got, "spec", "runner", "image"); img != "reg.io/nginx:1" {
		t.Errorf("custom kind image = %v, want reg.io/nginx:1", img)
	}
}

func TestImageOverriderErrors(t *testing.T) {
	cases := map[string]struct {
		obj      *unstructured.Unstructured
		o        api.ImageOverrider
		wantPath string
		wantErr  string
	}{
		"predicate path missing": {
			obj:      apitest.MakeDeployment("web", "default").Obj(),
			o:        api.ImageOverrider{Predicate: &api.ImagePredicate{Path: "/spec/template/spec/containers/3/image"}, Component: api.Tag, Operator: api.OverriderOpReplace, Value: "v2"},
			wantPath: "/spec/template/spec/containers/3/image",
			wantErr:  "out of range",
		},
		"predicate path not a string": {
			obj:      apitest.MakeDeployment("web", "default").Obj(),
			o:        api.ImageOverrider{Predicate: &api.ImagePredicate{Path: "/spec/replicas"}, Component: api.Tag, Operator: api.OverriderOpReplace, Value: "v2"},
			wantPath: "/spec/replicas",
			wantErr:  "holds a number, not a string",
		},
		"predicate path without slash": {
			obj:      apitest.MakeDeployment("web", "default").Obj(),
			o:        api.ImageOverrider{Predicate: &api.ImagePredicate{Path: "spec/template"}, Component: api.Tag, Operator: api.OverriderOpReplace, Value: "v2"},
			wantPath: "spec/template",
			wantErr:  "must start with /",
		},
		"invalid image in container": {
			obj:      apitest.MakeDeployment("web", "default").Container("sidecar", "Envoy").Obj(),
			o:        api.ImageOverrider{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "reg.io"},
			wantPath: "/spec/template/spec/containers/1/image",
			wantErr:  "must be lowercase",
		},
		"container without image": {
			obj:      apitest.MakeDeployment("web", "default").Command("noimage", "sh").Obj(),
			o:        api.ImageOverrider{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "reg.io"},
			wantPath: "/spec/template/spec/containers/1/image",
			wantErr:  "container noimage has no image",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := applyRule(t, tc.obj, api.Overriders{ImageOverrider: []api.ImageOverrider{tc.o}})
			assertOverrideError(t, err, "spec.overrideRules[0].overriders.imageOverrider[0]", tc.wantPath, tc.wantErr)
		})
	}
}

// assertOverrideError checks an *Error's field, path and cause text.
func assertOverrideError(t *testing.T, err error, field, path, cause string) {
	t.Helper()
	oe, ok := err.(*Error)
	if !ok {
		t.Fatalf("error = %v (%T), want *Error", err, err)
	}
	if oe.Field != field || oe.Path != path || !strings.Contains(oe.Err.Error(), cause) {
		t.Errorf("error = {Field: %q, Path: %q, Err: %v}, want {Field: %q, Path: %q, Err containing %q}", oe.Field, oe.Path, oe.Err, field, path, cause)
	}
	if !strings.Contains(err.Error(), "OverridePolicy default/p") {
		t.Errorf("error %q does not name the policy", err)
	}
}
