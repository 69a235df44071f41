package member

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// testStallingDiscovery: a member that answers /readyz but never answers
// discovery is reported not Ready (not reachable) once the caller's
// deadline passes, not after client-go's own timeouts or never, and the
// discovery requests it held are all given up, so no goroutine is left
// waiting on it.
func testStallingDiscovery(t *testing.T, m *testenv.Cluster) {
	p := m.StallProxy(t, func(r *http.Request) bool { return r.URL.Path == "/api" || r.URL.Path == "/apis" })
	c, err := NewCache(CacheOptions{}).Get(t.Context(), "stalled", Connection{Host: p.URL, Token: m.Token, ClusterCACertificate: p.CAData})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Probe(t.Context()); err != nil {
		t.Fatalf("Probe through the proxy = %v, want the member ready (only discovery stalls)", err)
	}
	const deadline = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	begin := time.Now()
	status, err := CollectStatus(ctx, c)
	took := time.Since(begin)
	if took > 10*time.Second {
		t.Errorf("CollectStatus took %s with a %s deadline, want it to return at the deadline", took, deadline)
	}
	if !errors.Is(err, api.ErrNotConnected) {
		t.Errorf("CollectStatus = %v, want api.ErrNotConnected", err)
	}
	ready := apimeta.FindStatusCondition(status.Conditions, api.ClusterConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != api.ReasonClusterNotReachable {
		t.Errorf("Ready condition = %+v, want False with reason %s", ready, api.ReasonClusterNotReachable)
	}
	if p.Seen() == 0 {
		t.Fatalf("the proxy held no discovery request; the test proves nothing")
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return p.Held() == 0, nil
	}); err != nil {
		t.Errorf("%d discovery requests are still waiting on the member after CollectStatus returned", p.Held())
	}
}

// holdingListener accepts TCP connections and never answers on them.
func holdingListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// TestRequestTimeout: every request to a member is bounded by the cache's
// RequestTimeout even when the caller's context has no deadline, so a
// member that never answers cannot hold a caller forever.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	addr := holdingListener(t)
	cache := NewCache(CacheOptions{RequestTimeout: 500 * time.Millisecond})
	c, err := cache.Get(t.Context(), "east", Connection{Host: addr, Token: secretToken, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, err = c.Kubernetes.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("a list from a silent member took %s, want it cut at the 500ms request timeout", took)
	}
	if err == nil {
		t.Fatal("a list from a silent member succeeded")
	}
	assertNoSecret(t, "list error", err.Error(), secretToken)
	if got := NewCache(CacheOptions{}).opts.RequestTimeout; got != DefaultRequestTimeout {
		t.Errorf("default request timeout = %s, want %s", got, DefaultRequestTimeout)
	}
}

// TestInvalidateClosesConnections: dropping a member's client, by
// Invalidate (a deleted Cluster) or by a changed connection (new
// credentials), closes its connections to the member, so nothing built
// from the old credentials stays open.
func TestInvalidateClosesConnections(t *testing.T) {
	t.Parallel()
	var closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	conn := Connection{Host: srv.URL, Token: secretToken, ClusterCACertificate: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}

	waitClosed := func(want int64, what string) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return closed.Load() >= want, nil
		}); err != nil {
			t.Errorf("%s: %d connections closed, want %d", what, closed.Load(), want)
		}
	}
	cache := NewCache(CacheOptions{})
	c, err := cache.Get(t.Context(), "east", conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if closed.Load() != 0 {
		t.Fatalf("a connection closed before the client was dropped; the test proves nothing")
	}
	rotated := conn
	rotated.Token = "rotated-" + secretToken
	c2, err := cache.Get(t.Context(), "east", rotated)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(1, "after the credentials changed")
	if err := c2.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	cache.Invalidate("east")
	waitClosed(2, "after Invalidate")
	if cache.Len() != 0 {
		t.Errorf("the cache holds %d clients after Invalidate, want 0", cache.Len())
	}
}
