package engine

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestSnapshotStalledMember: a member that answers /readyz but holds its
// discovery requests, as the one that froze a terraform plan did, is
// planned as unreachable once the status timeout passes, while the healthy
// member beside it is read as usual; and a snapshot taken under a
// cancelled context leaves nothing cached, so the next plan reads the
// member afresh.
func TestSnapshotStalledMember(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	m := env.Clusters[0]
	p := m.StallProxy(t, func(r *http.Request) bool { return r.URL.Path == "/api" || r.URL.Path == "/apis" })
	healthy := member.Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: m.CAData}
	stalled := member.Connection{Host: p.URL, Token: m.Token, ClusterCACertificate: p.CAData}
	members := []Member{
		{Cluster: *apitest.MakeCluster("healthy").Obj(), Connection: &healthy},
		{Cluster: *apitest.MakeCluster("stalled").Obj(), Connection: &stalled},
	}

	t.Run("stalled discovery", func(t *testing.T) {
		e, err := New(Options{Fleet: "test", StatusTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		clusters, reasons := e.Snapshot(t.Context(), members)
		if took := time.Since(begin); took > 15*time.Second {
			t.Errorf("Snapshot took %s with a 2s status timeout", took)
		}
		if p.Seen() == 0 {
			t.Fatal("the proxy held no discovery request; the test proves nothing")
		}
		if err := reasons["stalled"]; !errors.Is(err, api.ErrNotConnected) {
			t.Errorf("reason of the stalled member = %v, want ErrNotConnected", err)
		}
		if err := reasons["healthy"]; err != nil {
			t.Errorf("reason of the healthy member = %v, want none", err)
		}
		if !apimeta.IsStatusConditionTrue(clusters[0].Status.Conditions, api.ClusterConditionReady) {
			t.Errorf("healthy member not Ready: %+v", clusters[0].Status.Conditions)
		}
		if !hasTaint(clusters[1].Spec.Taints, api.TaintClusterUnreachable, corev1.TaintEffectNoExecute) {
			t.Errorf("stalled member taints = %v, want the unreachable NoExecute taint", clusters[1].Spec.Taints)
		}
	})

	t.Run("cancelled context is not cached", func(t *testing.T) {
		// The member's first /readyz answers after a second, so the
		// caller's context ends while its status is being collected.
		var slowed atomic.Bool
		slow := m.StallProxy(t, func(r *http.Request) bool {
			if r.URL.Path == "/readyz" && slowed.CompareAndSwap(false, true) {
				time.Sleep(time.Second)
			}
			return false
		})
		conn := member.Connection{Host: slow.URL, Token: m.Token, ClusterCACertificate: slow.CAData}
		slowMember := []Member{{Cluster: *apitest.MakeCluster("slow").Obj(), Connection: &conn}}
		e, err := New(Options{Fleet: "test"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		_, reasons := e.Snapshot(ctx, slowMember)
		if err := reasons["slow"]; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("reason when the caller's deadline passed = %v, want context.DeadlineExceeded", err)
		}
		if !slowed.Load() {
			t.Fatal("the member was not asked; the test proves nothing")
		}
		clusters, reasons := e.Snapshot(t.Context(), slowMember)
		if err := reasons["slow"]; err != nil {
			t.Errorf("the next snapshot reports %v: the first caller's context error was cached", err)
		}
		if !apimeta.IsStatusConditionTrue(clusters[0].Status.Conditions, api.ClusterConditionReady) {
			t.Errorf("member not Ready after a cancelled snapshot: %+v", clusters[0].Status.Conditions)
		}
	})
}

func hasTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) bool {
	for _, t := range taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}
