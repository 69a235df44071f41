package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestRenderReplicas(t *testing.T) {
	cases := map[string]struct {
		tmpl       *unstructured.Unstructured
		scheduling api.ReplicaSchedulingType
		clusters   []Target
		fields     []string
		want       map[string]any
	}{
		"deployment divided": {
			tmpl: apitest.MakeDeployment("web", "default").Replicas(3).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("east", 1, "west", 2), fields: []string{"spec", "replicas"},
			want: map[string]any{"east": int64(1), "west": int64(2)},
		},
		"statefulset divided": {
			tmpl: apitest.MakeStatefulSet("db", "default").Replicas(5).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 3, "b", 2), fields: []string{"spec", "replicas"},
			want: map[string]any{"a": int64(3), "b": int64(2)},
		},
		"replicaset divided": {
			tmpl: apitest.MakeReplicaSet("rs", "default").Replicas(4).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 4, "b", 0), fields: []string{"spec", "replicas"},
			want: map[string]any{"a": int64(4), "b": int64(0)},
		},
		"job divided revises parallelism": {
			tmpl: apitest.MakeJob("j", "default").Parallelism(4).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 3, "b", 1), fields: []string{"spec", "parallelism"},
			want: map[string]any{"a": int64(3), "b": int64(1)},
		},
		"job divided splits completions by parallelism": {
			tmpl: apitest.MakeJob("j", "default").Parallelism(4).Completions(10).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 3, "b", 1), fields: []string{"spec", "completions"},
			// 10*3/4 = 7, 10*1/4 = 2, the remainder 1 goes to the heavier a.
			want: map[string]any{"a": int64(8), "b": int64(2)},
		},
		"job without completions keeps them unset": {
			tmpl: apitest.MakeJob("j", "default").Parallelism(4).Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 2, "b", 2), fields: []string{"spec", "completions"},
			want: map[string]any{"a": nil, "b": nil},
		},
		"duplicated keeps replicas": {
			tmpl: apitest.MakeDeployment("web", "default").Replicas(3).Obj(), scheduling: api.ReplicaSchedulingTypeDuplicated,
			clusters: targets("east", 3, "west", 3), fields: []string{"spec", "replicas"},
			want: map[string]any{"east": int64(3), "west": int64(3)},
		},
		"empty scheduling type is duplicated": {
			tmpl: apitest.MakeDeployment("web", "default").Replicas(3).Obj(), scheduling: "",
			clusters: targets("east", 1, "west", 2), fields: []string{"spec", "replicas"},
			want: map[string]any{"east": int64(3), "west": int64(3)},
		},
		"duplicated job keeps completions": {
			tmpl: apitest.MakeJob("j", "default").Parallelism(2).Completions(6).Obj(), scheduling: api.ReplicaSchedulingTypeDuplicated,
			clusters: targets("a", 2, "b", 2), fields: []string{"spec", "completions"},
			want: map[string]any{"a": int64(6), "b": int64(6)},
		},
		"template without replicas field stays without": {
			tmpl: apitest.MakeDeployment("web", "default").Remove("spec", "replicas").Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("east", 1, "west", 2), fields: []string{"spec", "replicas"},
			want: map[string]any{"east": nil, "west": nil},
		},
		"daemonset is not revised": {
			tmpl: apitest.MakeDaemonSet("ds", "default").Set(int64(7), "spec", "replicas").Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 1), fields: []string{"spec", "replicas"},
			want: map[string]any{"a": int64(7)},
		},
		"custom kind is not revised": {
			tmpl: apitest.MakeTemplate("example.io/v1", "Deployment", "d", "default").Set(int64(9), "spec", "replicas").Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 1), fields: []string{"spec", "replicas"},
			want: map[string]any{"a": int64(9)},
		},
		"float replicas from a JSON decoder": {
			tmpl: apitest.MakeDeployment("web", "default").Set(float64(4), "spec", "replicas").Obj(), scheduling: api.ReplicaSchedulingTypeDivided,
			clusters: targets("a", 1, "b", 3), fields: []string{"spec", "replicas"},
			want: map[string]any{"a": int64(1), "b": int64(3)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			works := mustRender(t, Input{Template: tc.tmpl, Clusters: tc.clusters, Fleet: "prod", ReplicaScheduling: tc.scheduling})
			got := map[string]any{}
			for cluster, w := range works {
				got[cluster] = field(t, w.Object, tc.fields...)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v per cluster (-want +got):\n%s", tc.fields, diff)
			}
		})
	}
}

func TestJobCompletions(t *testing.T) {
	cases := map[string]struct {
		completions int32
		clusters    []Target
		want        map[string]int64
	}{
		"even split":                   {completions: 6, clusters: targets("a", 1, "b", 1, "c", 1), want: map[string]int64{"a": 2, "b": 2, "c": 2}},
		"remainder by weight":          {completions: 7, clusters: targets("a", 1, "b", 2), want: map[string]int64{"a": 2, "b": 5}},
		"tie broken by name":           {completions: 5, clusters: targets("b", 1, "a", 1), want: map[string]int64{"a": 3, "b": 2}},
		"fewer completions than sites": {completions: 1, clusters: targets("c", 1, "b", 1, "a", 1), want: map[string]int64{"a": 1, "b": 0, "c": 0}},
		"zero weights assign nothing":  {completions: 4, clusters: targets("a", 0, "b", 0), want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := jobCompletions(apitest.MakeJob("j", "default").Completions(tc.completions).Obj(), tc.clusters)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderReplicasNotANumber(t *testing.T) {
	_, err := Render(divided(apitest.MakeDeployment("web", "default").Set("three", "spec", "replicas").Obj(), targets("a", 1)))
	want := `render apps/v1, Kind=Deployment, default/web for cluster a: revise replicas: spec.replicas is three, not a whole number`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestJobCompletionsBounded checks that completions are bounded like
// replicas: a count beyond int32 used to overflow weight × completions and
// render negative completions.
func TestJobCompletionsBounded(t *testing.T) {
	const prefix = "render batch/v1, Kind=Job, default/j: divide job completions: "
	cases := map[string]struct {
		completions any
		clusters    []Target
		want        map[string]int64
		wantErr     string
	}{
		"5e18 as an integer": {completions: int64(5e18), clusters: targets("a", 3, "b", 1),
			wantErr: "spec.completions: want a non-negative integer of at most 2147483647, got 5000000000000000000"},
		"5e18 as a float": {completions: float64(5e18), clusters: targets("a", 3, "b", 1),
			wantErr: "spec.completions: want a non-negative integer of at most 2147483647, got 5000000000000000000"},
		"beyond int64 as a float": {completions: float64(1e19), clusters: targets("a", 1),
			wantErr: "spec.completions is 1e+19, not a whole number"},
		"one past int32": {completions: int64(1 << 31), clusters: targets("a", 1),
			wantErr: "spec.completions: want a non-negative integer of at most 2147483647, got 2147483648"},
		"negative": {completions: int64(-1), clusters: targets("a", 1),
			wantErr: "spec.completions: want a non-negative integer of at most 2147483647, got -1"},
		"int32 max with int32 max weights stays exact": {completions: int64(1<<31 - 1),
			clusters: targets("a", 1<<31-1, "b", 1<<31-1),
			want:     map[string]int64{"a": 1 << 30, "b": 1<<30 - 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tmpl := apitest.MakeJob("j", "default").Parallelism(2).Set(tc.completions, "spec", "completions").Obj()
			works, err := Render(divided(tmpl, tc.clusters))
			if tc.wantErr != "" {
				if want := prefix + tc.wantErr; err == nil || err.Error() != want {
					t.Fatalf("error = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for name, w := range works {
				n, _, _ := unstructured.NestedInt64(w.Object.Object, "spec", "completions")
				got[name] = n
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderOnly: rendering one cluster alone gives the very work a full
// render gives it, a divided Job's completions (shared out over every
// cluster) included, and no other cluster's.
func TestRenderOnly(t *testing.T) {
	in := Input{Template: apitest.MakeJob("j", "default").Completions(7).Obj(), Clusters: targets("a", 1, "b", 2), Fleet: "prod", ReplicaScheduling: api.ReplicaSchedulingTypeDivided}
	full := mustRender(t, in)
	in.Only = "b"
	only := mustRender(t, in)
	if len(only) != 1 {
		t.Fatalf("Only b rendered %d works, want 1", len(only))
	}
	if diff := cmp.Diff(full["b"].Object.Object, only["b"].Object.Object); diff != "" {
		t.Errorf("work of b alone differs from the full render's (-full +only):\n%s", diff)
	}
}
