package status_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/status"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// recorder keeps every progress report and when it came.
type recorder struct {
	mu    sync.Mutex
	calls []status.Progress
	at    []time.Time
}

func (r *recorder) report(p status.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, p)
	r.at = append(r.at, time.Now())
}

// notReady lists the clusters each report named, one string per report.
func (r *recorder) notReady() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.calls {
		var names []string
		for _, c := range p.NotReady() {
			names = append(names, c.Cluster)
		}
		out = append(out, strings.Join(names, ","))
	}
	return out
}

func clusterNames(agg health.Aggregated) map[string]string {
	out := map[string]string{}
	for _, c := range agg.Clusters {
		out[c.Cluster] = string(c.Health) + ": " + c.Reason()
	}
	return out
}

func TestWait(t *testing.T) {
	f := testenv.Start(t, testenv.Options{Clusters: 2})
	clients := map[string]dynamic.Interface{}
	for _, c := range f.Clusters {
		client, err := dynamic.NewForConfig(c.RESTConfig())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		clients[c.Name] = client
	}
	targets := execution.Targets{}
	for _, c := range f.Clusters {
		dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		targets[c.Name] = execution.Target{Dynamic: clients[c.Name], Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	}
	reader := &execution.Executor{Clusters: targets, Fleet: "test"}
	create := func(t *testing.T, cluster string, obj *unstructured.Unstructured) {
		t.Helper()
		if _, err := clients[cluster].Resource(deployments).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s in %s: %v", obj.GetName(), cluster, err)
		}
	}
	both := []string{"member1", "member2"}

	web := apitest.MakeDeployment("web", "default").Replicas(2).Obj()
	t.Run("healthy in every member: the aggregated status sums the members", func(t *testing.T) {
		for _, cluster := range both {
			create(t, cluster, web)
		}
		var rec recorder
		agg, err := status.Wait(t.Context(), status.Options{
			Template: web, Clusters: both, Interval: 250 * time.Millisecond, Timeout: 60 * time.Second,
		}, reader.ObserveLive, rec.report)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if agg.Health != health.Healthy {
			t.Errorf("Health = %s, want Healthy", agg.Health)
		}
		if got := agg.Status["readyReplicas"]; got != int64(4) {
			t.Errorf("aggregated readyReplicas = %v, want 4 (status %v)", got, agg.Status)
		}
		want := map[string]string{"member1": "Healthy: 2/2 replicas available", "member2": "Healthy: 2/2 replicas available"}
		if diff := cmp.Diff(want, clusterNames(agg)); diff != "" {
			t.Errorf("clusters (-want +got):\n%s", diff)
		}
		t.Logf("healthy after %d progress report(s): %v", len(rec.calls), rec.notReady())
	})

	t.Run("a member that cannot schedule its pods: times out naming it", func(t *testing.T) {
		stuck := apitest.MakeDeployment("stuck", "default").Replicas(2).Obj()
		create(t, "member1", stuck)
		unschedulable := stuck.DeepCopy()
		if err := unstructured.SetNestedStringMap(unschedulable.Object, map[string]string{"flotilla.io/no-such-node": "true"},
			"spec", "template", "spec", "nodeSelector"); err != nil {
			t.Fatal(err)
		}
		create(t, "member2", unschedulable)

		const interval = 400 * time.Millisecond
		var rec recorder
		agg, err := status.Wait(t.Context(), status.Options{
			Template: stuck, Clusters: both, Interval: interval, Timeout: 5 * time.Second,
		}, reader.ObserveLive, rec.report)
		var waitErr *status.WaitError
		if !errors.As(err, &waitErr) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait error = %v, want a *WaitError wrapping context.DeadlineExceeded", err)
		}
		if want := "timed out after 5s waiting for Deployment default/stuck: member2: 0/2 replicas available"; err.Error() != want {
			t.Errorf("error:\n got %s\nwant %s", err, want)
		}
		if agg.Health != health.Unhealthy {
			t.Errorf("Health = %s, want Unhealthy", agg.Health)
		}
		if got := clusterNames(agg)["member1"]; got != "Healthy: 2/2 replicas available" {
			t.Errorf("member1 = %q, want healthy", got)
		}

		reports := rec.notReady()
		if len(reports) < 2 {
			t.Fatalf("got %d progress reports in 5s at a %s interval, want several", len(reports), interval)
		}
		// member1 may still be starting its pods in the first reports.
		for i, names := range reports {
			if names != "member2" && names != "member1,member2" {
				t.Errorf("progress report %d named %q as not ready, want member2 (and member1 only while it starts)", i, names)
			}
		}
		if last := reports[len(reports)-1]; last != "member2" {
			t.Errorf("the last progress report named %q as not ready, want member2 alone", last)
		}
		for i := 1; i < len(rec.at); i++ {
			if gap := rec.at[i].Sub(rec.at[i-1]); gap < interval {
				t.Errorf("progress reports %d and %d came %s apart, closer than the %s interval", i-1, i, gap, interval)
			}
		}
		if s := rec.calls[len(rec.calls)-1].String(); !strings.HasPrefix(s, "waiting for Deployment default/stuck: member2: ") {
			t.Errorf("progress reads %q", s)
		}
	})

	t.Run("a missing object and an unconnected member are waited for and named", func(t *testing.T) {
		absent := apitest.MakeDeployment("absent", "default").Obj()
		agg, err := status.Wait(t.Context(), status.Options{
			Template: absent, Clusters: []string{"member3", "member1", "member2"},
			Interval: 200 * time.Millisecond, Timeout: time.Second,
		}, reader.ObserveLive, nil)
		want := "timed out after 1s waiting for Deployment default/absent: member1: not found; member2: not found; member3: unreachable: not connected"
		if err == nil || err.Error() != want {
			t.Errorf("error:\n got %v\nwant %s", err, want)
		}
		if agg.Health != health.Unknown {
			t.Errorf("Health = %s, want Unknown", agg.Health)
		}
	})

	t.Run("cancelled: the error says so and names the members", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		_, err := status.Wait(ctx, status.Options{
			Template: apitest.MakeDeployment("absent", "default").Obj(), Clusters: []string{"member1"},
			Interval: 100 * time.Millisecond,
		}, reader.ObserveLive, nil)
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "stopped waiting for Deployment default/absent after ") ||
			!strings.HasSuffix(err.Error(), "(context canceled): member1: not found") {
			t.Errorf("error = %v, want a cancellation naming member1", err)
		}
	})

	// Last, because it takes member2's apiserver down for a while.
	t.Run("an unreachable member is reported and waited for until it is back", func(t *testing.T) {
		member2 := f.Cluster("member2")
		member2.StopAPIServer()
		restarted := make(chan error, 1)
		var once sync.Once
		var sawUnreachable string
		agg, err := status.Wait(t.Context(), status.Options{
			Template: web, Clusters: both, Interval: 300 * time.Millisecond, Timeout: 60 * time.Second,
		}, reader.ObserveLive, func(p status.Progress) {
			for _, c := range p.NotReady() {
				if c.Cluster == "member2" && c.Health == health.Unknown && strings.HasPrefix(c.Reason(), "unreachable: ") {
					once.Do(func() {
						sawUnreachable = c.Reason()
						go func() { restarted <- member2.StartAPIServer(t.Context()) }()
					})
				}
			}
		})
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if sawUnreachable == "" {
			t.Fatal("no progress report named member2 unreachable while its apiserver was down")
		}
		if err := <-restarted; err != nil {
			t.Fatalf("restart member2: %v", err)
		}
		t.Logf("member2 while down: %s", sawUnreachable)
		if strings.Contains(sawUnreachable, member2.Token) {
			t.Errorf("the unreachable message carries the member's token: %s", sawUnreachable)
		}
		if agg.Health != health.Healthy || agg.Status["readyReplicas"] != int64(4) {
			t.Errorf("after the restart: Health %s, status %v; want Healthy with readyReplicas 4", agg.Health, agg.Status)
		}
	})
}

func TestWaitNeedsNoMemberForTrivialOrInvalidInput(t *testing.T) {
	neverRead := func(context.Context, []execution.ObserveRequest) []execution.Observation {
		t.Error("read was called")
		return nil
	}
	tmpl := apitest.MakeDeployment("web", "default").Obj()
	cases := []struct {
		name    string
		opts    status.Options
		read    status.ReadFunc
		wantErr string
	}{
		{"no template", status.Options{Clusters: []string{"a"}}, neverRead, "wait for rollout: no template given"},
		{"no read function", status.Options{Template: tmpl, Clusters: []string{"a"}}, nil, "wait for Deployment default/web: no read function given"},
		{"no clusters: nothing to wait for", status.Options{Template: tmpl}, neverRead, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := status.Wait(t.Context(), tc.opts, tc.read, nil)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

// TestWaitWithCustomization: with an Interpreter, Wait judges a custom
// kind's health and aggregates its status with the customization (here
// flotilla's Argo Rollout one); without, a Rollout counts as healthy as
// soon as it exists.
func TestWaitWithCustomization(t *testing.T) {
	in, err := interpret.New(apitest.ReadInterpreters(t, "../../examples/interpreter/argo-rollout.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rollout := func(replicas int64, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "checkout", "namespace": "shop", "generation": int64(1)},
			"spec":     map[string]any{"replicas": replicas},
		}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	healthy := func(n int64) map[string]any {
		return map[string]any{"observedGeneration": "1", "replicas": n, "updatedReplicas": n, "availableReplicas": n, "phase": "Healthy"}
	}
	degraded := map[string]any{"observedGeneration": "1", "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(0), "phase": "Degraded"}
	read := func(west map[string]any) status.ReadFunc {
		return func(_ context.Context, reqs []execution.ObserveRequest) []execution.Observation {
			live := map[string]*unstructured.Unstructured{"east": rollout(2, healthy(2)), "west": rollout(1, west)}
			out := make([]execution.Observation, len(reqs))
			for i, r := range reqs {
				out[i] = execution.Observation{Cluster: r.Cluster, Live: live[r.Cluster], Owned: true}
			}
			return out
		}
	}
	opts := status.Options{Template: rollout(3, nil), Clusters: []string{"east", "west"}, Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond}
	for _, tc := range []struct {
		name        string
		interpreter *interpret.Interpreter
		west        map[string]any
		wantHealth  health.Health
		wantPhase   any
		wantErr     bool
	}{
		{"customized, one member degraded", in, degraded, health.Unhealthy, "Degraded", true},
		{"customized, both healthy", in, healthy(1), health.Healthy, "Healthy", false},
		{"built-in rules: exists is healthy", nil, degraded, health.Healthy, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			o.Interpreter = tc.interpreter
			agg, err := status.Wait(t.Context(), o, read(tc.west), nil)
			if (err != nil) != tc.wantErr {
				t.Errorf("error = %v, want error %v", err, tc.wantErr)
			}
			if agg.Health != tc.wantHealth || agg.Status["phase"] != tc.wantPhase {
				t.Errorf("Health %s, status %v; want %s with phase %v", agg.Health, agg.Status, tc.wantHealth, tc.wantPhase)
			}
		})
	}
}

// TestWaitAggregationScriptFails: a statusAggregation script that raises
// an error ends the wait at once with it, naming the customization and
// the line, rather than waiting out the timeout.
func TestWaitAggregationScriptFails(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target: api.CustomizationTarget{APIVersion: "example.com/v1", Kind: "Widget"},
			Customizations: api.CustomizationRules{StatusAggregation: &api.LuaScript{
				LuaScript: "function AggregateStatus(desiredObj, statusItems)\n  error(\"boom\")\nend\n",
			}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "gear", "namespace": "default"},
	}}
	read := func(_ context.Context, reqs []execution.ObserveRequest) []execution.Observation {
		out := make([]execution.Observation, len(reqs))
		for i, r := range reqs {
			out[i] = execution.Observation{Cluster: r.Cluster, Live: widget.DeepCopy(), Owned: true}
		}
		return out
	}
	start := time.Now()
	agg, err := status.Wait(t.Context(), status.Options{Template: widget, Clusters: []string{"east"}, Timeout: time.Minute, Interpreter: in}, read, nil)
	if err == nil || err.Error() != `wait for Widget default/gear: resource interpreter customization "broken": statusAggregation: statusAggregation:2: boom` {
		t.Errorf("error = %v, want the failing script named with its line", err)
	}
	if agg.Health != health.Unknown || agg.Status != nil {
		t.Errorf("Health %s, status %v; want Unknown without status", agg.Health, agg.Status)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the wait took %s: it should end at the first poll", elapsed)
	}
}
