package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// fixture is a 3-member fleet whose nodes hold 2 CPUs each, with one more
// 4-CPU node in member3, so capacity-driven placements are predictable.
type fixture struct {
	env     *testenv.Fleet
	members []Member
	clients map[string]kubernetes.Interface
	engine  *Engine
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Clusters: 3, Node: testenv.NodeSpec{CPU: resource.MustParse("2")}})
	if err := env.Cluster("member3").AddNode(t.Context(), "member3-big", testenv.NodeSpec{CPU: resource.MustParse("4")}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env, clients: map[string]kubernetes.Interface{}}
	for _, c := range env.Clusters {
		conn := member.Connection{Host: c.Host, Token: c.Token, ClusterCACertificate: c.CAData}
		f.members = append(f.members, Member{Cluster: *apitest.MakeCluster(c.Name).Region("r-" + c.Name).Obj(), Connection: &conn})
		cs := c.Clientset(t)
		f.clients[c.Name] = cs
	}
	e, err := New(Options{Fleet: "test", StatusTTL: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.engine = e
	return f
}

// replicasIn lists spec.replicas of a Deployment per member, 0 when absent.
func (f *fixture) replicasIn(t *testing.T, namespace, name string) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	for cluster, cs := range f.clients {
		d, err := cs.AppsV1().Deployments(namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		out[cluster] = *d.Spec.Replicas
	}
	return out
}

func placement(r plan.Result) map[string]int32 {
	out := map[string]int32{}
	for _, tc := range r.Placement {
		out[tc.Name] = tc.Replicas
	}
	return out
}

func planned(r plan.Result, tmpl *unstructured.Unstructured, applied []string) Planned {
	p := Planned{Template: tmpl, Placement: r.Placement, Hashes: map[string]string{}, Applied: applied}
	for c, w := range r.Works {
		p.Hashes[c] = w.Hash
	}
	return p
}

func weighted(w1, w2, w3 int64) api.PropagationPolicy {
	return *apitest.MakePropagationPolicy("web", "shop").SelectName("apps/v1", "Deployment", "web").
		Divided(api.ReplicaDivisionPreferenceWeighted).
		Weight(w1, "member1").Weight(w2, "member2").Weight(w3, "member3").Obj()
}

// planApply plans, applies exactly that plan, and returns what was applied.
func (f *fixture) planApply(t *testing.T, fleet Fleet, tmpl *unstructured.Unstructured, before []string) (plan.Result, Applied) {
	t.Helper()
	results, reasons := f.engine.Plan(t.Context(), fleet, []*unstructured.Unstructured{tmpl}, nil)
	if len(reasons) > 0 {
		t.Fatalf("status reasons: %v", reasons)
	}
	if results[0].Err != nil {
		t.Fatalf("plan: %v", results[0].Err)
	}
	applied, err := f.engine.Apply(t.Context(), fleet, []Planned{planned(results[0], tmpl, before)})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return results[0], applied[0]
}

func TestEngine(t *testing.T) {
	f := newFixture(t)
	tmpl := apitest.MakeDeployment("web", "shop").Replicas(3).Image("nginx:1.27").Obj()
	fleet := Fleet{Members: f.members, PropagationPolicies: []api.PropagationPolicy{weighted(1, 2, 0)}}
	var applied Applied

	t.Run("status feeds the snapshot", func(t *testing.T) {
		clusters, reasons := f.engine.Snapshot(t.Context(), f.members)
		if len(reasons) != 0 {
			t.Fatalf("reasons: %v", reasons)
		}
		for _, c := range clusters {
			if c.Status.KubernetesVersion != "v1.35.4" {
				t.Errorf("%s version %q", c.Name, c.Status.KubernetesVersion)
			}
			if c.Status.ResourceSummary == nil {
				t.Fatalf("%s has no resource summary", c.Name)
			}
		}
		cpu := clusters[2].Status.ResourceSummary.Allocatable[corev1.ResourceCPU]
		if cpu.Cmp(resource.MustParse("6")) != 0 {
			t.Errorf("member3 allocatable cpu: want 6, got %s", cpu.String())
		}
	})

	t.Run("weighted 1:2 propagates and becomes healthy", func(t *testing.T) {
		var r plan.Result
		r, applied = f.planApply(t, fleet, tmpl, nil)
		want := map[string]int32{"member1": 1, "member2": 2}
		if diff := cmp.Diff(want, placement(r)); diff != "" {
			t.Fatalf("placement (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, f.replicasIn(t, "shop", "web")); diff != "" {
			t.Errorf("replicas in members (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"member1", "member2"}, applied.Clusters); diff != "" {
			t.Errorf("applied clusters (-want +got):\n%s", diff)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		agg, err := f.engine.Wait(ctx, Fleet{Members: f.members}, tmpl, applied.Clusters, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if agg.Health != health.Healthy {
			t.Errorf("health: %s", agg.Health)
		}
		if got := agg.Status["readyReplicas"]; got != int64(3) {
			t.Errorf("aggregated readyReplicas: want 3, got %v", got)
		}
	})

	t.Run("a second apply of the same plan changes nothing", func(t *testing.T) {
		_, again := f.planApply(t, fleet, tmpl, applied.Clusters)
		for _, o := range again.Outcomes {
			if o.Changed {
				t.Errorf("%s changed on an identical apply", o.Cluster)
			}
		}
	})

	t.Run("new weights move replicas and prune the cluster that was dropped", func(t *testing.T) {
		fleet.PropagationPolicies = []api.PropagationPolicy{weighted(0, 1, 2)}
		_, applied = f.planApply(t, fleet, tmpl, applied.Clusters)
		if diff := cmp.Diff(map[string]int32{"member2": 1, "member3": 2}, f.replicasIn(t, "shop", "web")); diff != "" {
			t.Errorf("replicas in members (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"member2", "member3"}, applied.Clusters); diff != "" {
			t.Errorf("applied clusters (-want +got):\n%s", diff)
		}
	})

	t.Run("observe shows drift in a managed field", func(t *testing.T) {
		// The deployment controller writes the object too, so retry on a conflict as kubectl edit would.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d, err := f.clients["member2"].AppsV1().Deployments("shop").Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.Template.Spec.Containers[0].Image = "nginx:hacked"
			_, err = f.clients["member2"].AppsV1().Deployments("shop").Update(t.Context(), d, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		results, _ := f.engine.Plan(t.Context(), fleet, []*unstructured.Unstructured{tmpl}, nil)
		objects := map[string]*unstructured.Unstructured{}
		for c, w := range results[0].Works {
			objects[c] = w.Object
		}
		for _, o := range f.engine.Observe(t.Context(), f.members, objects) {
			if o.Err != nil || o.NotFound || !o.Owned {
				t.Fatalf("%s: err %v notFound %v owned %v", o.Cluster, o.Err, o.NotFound, o.Owned)
			}
			containers, _, _ := unstructured.NestedSlice(o.Managed.Object, "spec", "template", "spec", "containers")
			image := containers[0].(map[string]any)["image"]
			want := "nginx:1.27"
			if o.Cluster == "member2" {
				want = "nginx:hacked"
			}
			if image != want {
				t.Errorf("%s managed image: want %s, got %v", o.Cluster, want, image)
			}
			if _, defaulted, _ := unstructured.NestedFieldNoCopy(o.Managed.Object, "spec", "strategy"); defaulted {
				t.Errorf("%s: the managed view must not hold server defaults", o.Cluster)
			}
		}
	})

	t.Run("an unreachable member makes the plan stale and nothing is applied", func(t *testing.T) {
		results, _ := f.engine.Plan(t.Context(), fleet, []*unstructured.Unstructured{tmpl}, nil)
		f.env.Cluster("member3").StopAPIServer()
		defer func() {
			if err := f.env.Cluster("member3").StartAPIServer(t.Context()); err != nil {
				t.Fatal(err)
			}
		}()
		_, err := f.engine.Apply(t.Context(), fleet, []Planned{planned(results[0], tmpl, applied.Clusters)})
		var stale *StalePlanError
		if !errors.As(err, &stale) {
			t.Fatalf("want a StalePlanError, got %v", err)
		}
		if !strings.Contains(err.Error(), "member3") || !strings.Contains(err.Error(), "run the plan again") {
			t.Errorf("error should name member3 and say to re-plan: %v", err)
		}
		d, err := f.clients["member2"].AppsV1().Deployments("shop").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil || d.Spec.Template.Spec.Containers[0].Image != "nginx:hacked" {
			t.Errorf("nothing may be applied when the plan is stale")
		}
	})

	t.Run("a template asking more than members hold is placed by the estimate", func(t *testing.T) {
		big := apitest.MakeDeployment("batch", "shop").Replicas(10).
			Set([]any{map[string]any{"name": "app", "image": "busybox", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}},
				"spec", "template", "spec", "containers").Obj()
		capacity := Fleet{Members: f.members, PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("batch", "shop").
			SelectName("apps/v1", "Deployment", "batch").Divided(api.ReplicaDivisionPreferenceWeighted).DynamicWeight().Obj()}}
		results, _ := f.engine.Plan(t.Context(), capacity, []*unstructured.Unstructured{big}, nil)
		if results[0].Err != nil {
			t.Fatal(results[0].Err)
		}
		got := placement(results[0])
		if got["member3"] <= got["member1"] || got["member3"] <= got["member2"] || got["member1"]+got["member2"]+got["member3"] != 10 {
			t.Errorf("member3 holds three times the CPU and should get the most of 10 replicas: %v", got)
		}
	})

	t.Run("delete removes the object from every member", func(t *testing.T) {
		res := f.engine.Delete(t.Context(), f.members, tmpl, []string{"member1", "member2", "member3"}, false)
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		if got := f.replicasIn(t, "shop", "web"); len(got) != 0 {
			t.Errorf("left behind: %v", got)
		}
		if _, ok := res.Find("member2", api.TemplateRefOf(tmpl)); !ok {
			t.Errorf("no outcome reported for member2")
		}
	})
}
