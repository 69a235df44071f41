package status_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/status"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestGate runs rollout gates against two real members: a bake that holds
// lasts its time; a member turning unhealthy during the bake fails the gate
// naming it; tolerated unhealthy members let the gate pass.
func TestGate(t *testing.T) {
	f := testenv.Start(t, testenv.Options{Clusters: 2})
	clients := map[string]dynamic.Interface{}
	targets := execution.Targets{}
	for _, c := range f.Clusters {
		client, err := dynamic.NewForConfig(c.RESTConfig())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		clients[c.Name] = client
		targets[c.Name] = execution.Target{Dynamic: client, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	}
	reader := &execution.Executor{Clusters: targets, Fleet: "test"}
	both := []string{"member1", "member2"}
	create := func(t *testing.T, cluster string, obj *unstructured.Unstructured) {
		t.Helper()
		if _, err := clients[cluster].Resource(deployments).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s in %s: %v", obj.GetName(), cluster, err)
		}
	}
	opts := func(tmpl *unstructured.Unstructured, tolerate int) status.Options {
		return status.Options{Template: tmpl, Clusters: both, Interval: 200 * time.Millisecond, Timeout: 60 * time.Second, Tolerate: tolerate}
	}

	t.Run("healthy through the bake: the gate lasts the bake and passes", func(t *testing.T) {
		web := apitest.MakeDeployment("baked", "default").Replicas(2).Obj()
		for _, c := range both {
			create(t, c, web)
		}
		if _, err := status.Wait(t.Context(), opts(web, 0), reader.ObserveLive, nil); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if _, err := status.Gate(t.Context(), opts(web, 0), time.Second, reader.ObserveLive, nil); err != nil {
			t.Fatalf("Gate: %v", err)
		}
		if took := time.Since(begin); took < time.Second {
			t.Errorf("the gate passed after %s, before its 1s bake", took)
		}
	})

	t.Run("unhealthy during the bake: the gate fails naming the member", func(t *testing.T) {
		web := apitest.MakeDeployment("turns", "default").Replicas(2).Obj()
		for _, c := range both {
			create(t, c, web)
		}
		// Healthy first, so the gate's wait passes at its first poll and
		// member2 turns during the bake.
		if _, err := status.Wait(t.Context(), opts(web, 0), reader.ObserveLive, nil); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(500*time.Millisecond, func() {
			// A broken image in member2: its new pods never become ready.
			patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:` + testenv.BrokenImageTag + `"}]}}}}`
			if _, err := clients["member2"].Resource(deployments).Namespace("default").Patch(t.Context(), "turns", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Errorf("patch member2: %v", err)
			}
		})
		_, err := status.Gate(t.Context(), opts(web, 0), 30*time.Second, reader.ObserveLive, nil)
		var bake *status.BakeError
		if !errors.As(err, &bake) {
			t.Fatalf("Gate error = %v, want a *BakeError", err)
		}
		if len(bake.NotReady) != 1 || bake.NotReady[0].Cluster != "member2" || !strings.Contains(err.Error(), "turned unhealthy") ||
			!strings.Contains(err.Error(), "into a 30s bake: member2: ") {
			t.Errorf("error %q names %v, want member2 alone", err, bake.NotReady)
		}
		if bake.Into >= 30*time.Second {
			t.Errorf("the gate failed %s into the bake, want as soon as member2 turned", bake.Into)
		}
	})

	t.Run("one unhealthy member tolerated: the gate passes", func(t *testing.T) {
		web := apitest.MakeDeployment("tolerated", "default").Replicas(2).Obj()
		create(t, "member1", web)
		broken := apitest.MakeDeployment("tolerated", "default").Replicas(2).Image("nginx:" + testenv.BrokenImageTag).Obj()
		create(t, "member2", broken)
		agg, err := status.Gate(t.Context(), opts(web, 1), 500*time.Millisecond, reader.ObserveLive, nil)
		if err != nil {
			t.Fatalf("Gate with one tolerated: %v", err)
		}
		if n := len(agg.NotHealthy()); n != 1 {
			t.Errorf("%d members not healthy, want member2 alone", n)
		}
	})
}
