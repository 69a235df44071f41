package engine

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestUnreachableMemberAskedOnce: a member that does not answer costs a run
// one wait, not one per call. A Terraform plan refreshes and plans every
// manifest with calls of their own, and each used to wait for its own
// timeout on a stopped member (a plan of two manifests took 38 s instead of
// 1 s). Once the engine has learnt that the member does not answer, from
// its probe or from a call that met a transport error, later calls fail at
// once, naming the member, without sending it a request; a member that
// answers is still read.
func TestUnreachableMemberAskedOnce(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	m := env.Clusters[0]
	var frozen atomic.Bool
	var sent atomic.Int64
	p := m.StallProxy(t, func(r *http.Request) bool {
		sent.Add(1)
		// Frozen: nothing answers, /readyz included. Otherwise only lists
		// of ConfigMaps hang, as on a member whose etcd stalls.
		return frozen.Load() || strings.Contains(r.URL.Path, "/configmaps")
	})
	healthy := member.Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: m.CAData}
	proxied := member.Connection{Host: p.URL, Token: m.Token, ClusterCACertificate: p.CAData}
	members := []Member{
		{Cluster: *apitest.MakeCluster("healthy").Obj(), Connection: &healthy},
		{Cluster: *apitest.MakeCluster("down").Obj(), Connection: &proxied},
	}
	objects := func(kind string) map[string]*unstructured.Unstructured {
		out := map[string]*unstructured.Unstructured{}
		for _, cluster := range []string{"healthy", "down"} {
			out[cluster] = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"namespace": "default", "name": "web"},
			}}
		}
		return out
	}
	// observe reads kind from both members and returns the down member's
	// error; the healthy member must answer (the object is not found).
	observe := func(t *testing.T, e *Engine, kind string) error {
		t.Helper()
		var downErr error
		for _, o := range e.Observe(t.Context(), members, objects(kind)) {
			switch o.Cluster {
			case "healthy":
				if o.Err != nil || !o.NotFound {
					t.Errorf("%s in the healthy member: err %v, not found %v; want it read (not found)", kind, o.Err, o.NotFound)
				}
			case "down":
				downErr = o.Err
			}
		}
		return downErr
	}

	t.Run("a probe that gets no answer", func(t *testing.T) {
		frozen.Store(true)
		defer frozen.Store(false)
		e, err := New(Options{Fleet: "test", ProbeTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, reasons := e.Snapshot(t.Context(), members)
		if !errors.Is(reasons["down"], api.ErrNotConnected) {
			t.Fatalf("snapshot: reason of the down member = %v, want ErrNotConnected", reasons["down"])
		}
		before := sent.Load()
		for _, kind := range []string{"Service", "Secret", "ConfigMap"} {
			if err := observe(t, e, kind); err == nil || !strings.Contains(err.Error(), "cluster down is not connected") {
				t.Errorf("observe %s in the down member: %v, want it refused as not connected", kind, err)
			}
		}
		if got := sent.Load() - before; got != 0 {
			t.Errorf("the engine sent %d more requests to a member it knew did not answer", got)
		}
	})

	t.Run("a call that meets a transport error", func(t *testing.T) {
		e, err := New(Options{Fleet: "test", ProbeTimeout: time.Second, RequestTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := observe(t, e, "ConfigMap"); err == nil {
			t.Fatal("a ConfigMap list the member holds was read")
		}
		if p.Seen() == 0 {
			t.Fatal("the proxy held no request; the test proves nothing")
		}
		before := sent.Load()
		if err := observe(t, e, "Service"); err == nil || !strings.Contains(err.Error(), "cluster down is not connected") {
			t.Errorf("observe Service after the member timed out: %v, want it refused as not connected", err)
		}
		if got := sent.Load() - before; got != 0 {
			t.Errorf("the engine sent %d more requests to a member a call had found unreachable", got)
		}
	})
}
