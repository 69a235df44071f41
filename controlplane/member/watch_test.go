package member

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestSummaryWatch checks the watched summaries against a member of its own,
// apiserver only, so that nothing but the test changes its nodes and pods.
// It is not parallel: its last step checks with goleak that the informers'
// goroutines end, which needs no other test starting goroutines meanwhile.
func TestSummaryWatch(t *testing.T) {
	f := testenv.Start(t, testenv.Options{Mode: testenv.APIServerOnly, NamePrefix: "watch"})
	m := f.Clusters[0]
	t.Run("summaries follow the member", func(t *testing.T) { testWatchedSummaries(t, m) })
	t.Run("a watch not synced in time reads as a failed list", func(t *testing.T) { testWatchNotSynced(t, m) })
	t.Run("discovery interval", func(t *testing.T) { testDiscoveryInterval(t, m) })
	t.Run("endpoint slices", func(t *testing.T) { testEndpointSlices(t, m) })
	t.Run("endpoint slices not watchable", func(t *testing.T) { testEndpointSlicesNotWatchable(t, m) })
	t.Run("informers stop with the client", func(t *testing.T) { testWatchStops(t, m) })
}

// watchedSummaries is the summaries and error of one way of summarizing.
type watchedSummaries struct {
	Nodes     *api.NodeSummary
	Resources *api.ResourceSummary
	Err       string
}

func testWatchedSummaries(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{Watch: true})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Invalidate(m.Name) })
	kube := c.Kubernetes
	ns := createNamespace(t, c, "watch")
	// The ServiceAccount admission needs the namespace's default account,
	// which no kube-controller-manager makes here.
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// same waits until the watched summaries equal the listed ones and
	// the listed ones pass check, which pins what the step changed.
	same := func(t *testing.T, check func(watchedSummaries) error) {
		t.Helper()
		var watched, listed watchedSummaries
		var checkErr error
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			watched = summaries(c.watch.summarize(ctx))
			listed = summaries(c.listSummaries(ctx))
			checkErr = check(listed)
			return checkErr == nil && cmp.Diff(listed, watched, quantities) == "", nil
		})
		if err != nil {
			t.Fatalf("watched summaries never matched: %v; listed: %v; (-listed +watched):\n%s", err, checkErr, cmp.Diff(listed, watched, quantities))
		}
	}
	counts := func(total, ready int32, allocatedPods, allocatingPods int64, allocatedCPU string) func(watchedSummaries) error {
		return func(s watchedSummaries) error {
			if s.Err != "" || s.Nodes == nil || s.Resources == nil {
				return fmt.Errorf("summaries incomplete: %+v", s)
			}
			got := fmt.Sprintf("%d/%d nodes, %d allocated pods (cpu %s), %d allocating", s.Nodes.TotalNum, s.Nodes.ReadyNum,
				s.Resources.Allocated.Pods().Value(), s.Resources.Allocated.Cpu(), s.Resources.Allocating.Pods().Value())
			want := fmt.Sprintf("%d/%d nodes, %d allocated pods (cpu %s), %d allocating", total, ready, allocatedPods, allocatedCPU, allocatingPods)
			if got != want {
				return fmt.Errorf("got %s, want %s", got, want)
			}
			return nil
		}
	}
	same(t, counts(0, 0, 0, 0, "0"))

	for _, n := range []*corev1.Node{
		makeNode("a").Ready().Allocatable("4", "8Gi", "110").Obj(),
		makeNode("b").Ready().Allocatable("2", "4Gi", "110").Obj(),
		makeNode("down").NotReady().Allocatable("8", "16Gi", "110").Obj(),
	} {
		createNode(t, c, n)
	}
	for _, p := range []*corev1.Pod{
		makePod("web-1").On("a").Container("500m", "1Gi").Container("250m", "256Mi").Obj(),
		makePod("web-2").On("b").Container("1", "1Gi").Obj(),
		makePod("migrate").On("a").Container("100m", "64Mi").InitContainer("1", "32Mi").Obj(),
		makePod("on-down-node").On("down").Container("2", "2Gi").Obj(),
		makePod("unbound").Pending().Container("300m", "100Mi").Obj(),
	} {
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Name, p.Spec.Containers[i].Image = fmt.Sprintf("c%d", i), "registry.example.com/app:1"
		}
		for i := range p.Spec.InitContainers {
			p.Spec.InitContainers[i].Image = "registry.example.com/app:1"
		}
		if _, err := kube.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
	}
	t.Run("added", func(t *testing.T) { same(t, counts(3, 2, 3, 1, "2750m")) })

	t.Run("changed: a pod succeeded, a node cordoned", func(t *testing.T) {
		p, err := kube.CoreV1().Pods(ns).Get(t.Context(), "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodSucceeded
		if _, err := kube.CoreV1().Pods(ns).UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("pod web-1 succeeded: %v", err)
		}
		n, err := kube.CoreV1().Nodes().Get(t.Context(), "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Spec.Unschedulable = true
		if _, err := kube.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("cordon node b: %v", err)
		}
		same(t, counts(3, 2, 1, 1, "1"))
	})

	t.Run("deleted", func(t *testing.T) {
		for _, name := range []string{"migrate", "unbound"} {
			if err := kube.CoreV1().Pods(ns).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatalf("delete pod %s: %v", name, err)
			}
		}
		if err := kube.CoreV1().Nodes().Delete(t.Context(), "down", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete node down: %v", err)
		}
		same(t, counts(2, 2, 0, 0, "0"))
	})
}

// testWatchNotSynced: until the informers have synced, a probe gets what a
// failed node list gave (no summaries, "list nodes: …") and the status stays
// Ready; the informers go on syncing, so a later probe has the summaries.
func testWatchNotSynced(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{Watch: true})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Invalidate(m.Name) })
	ctx, cancel := context.WithTimeout(t.Context(), time.Microsecond)
	defer cancel()
	nodes, resources, err := c.summarize(ctx)
	if want := "list nodes: watch not synced in time: context deadline exceeded"; err == nil || err.Error() != want {
		t.Errorf("summarize before the sync = %v, want %q", err, want)
	}
	if nodes != nil || resources != nil {
		t.Errorf("summaries before the sync = %v, %v, want none", nodes, resources)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	status, err := CollectStatus(ctx, c)
	if err != nil {
		t.Fatalf("CollectStatus once synced: %v", err)
	}
	if status.NodeSummary == nil || status.ResourceSummary == nil {
		t.Errorf("no summaries once synced: %+v", status)
	}
}

// summaries puts a summarize result in comparable form.
func summaries(nodes *api.NodeSummary, resources *api.ResourceSummary, err error) watchedSummaries {
	s := watchedSummaries{Nodes: nodes, Resources: resources}
	if err != nil {
		s.Err = err.Error()
	}
	return s
}

// createNode creates n with its status (which Create drops) and deletes it
// after the test.
func createNode(t *testing.T, c *Client, n *corev1.Node) {
	t.Helper()
	nodes := c.Kubernetes.CoreV1().Nodes()
	created, err := nodes.Create(t.Context(), n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", n.Name, err)
	}
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	created.Status = n.Status
	if _, err := nodes.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set status of node %s: %v", n.Name, err)
	}
}

// testDiscoveryInterval: a watching cache keeps the last complete discovery
// while the member's discovery documents keep their ETags, so an unchanged
// member is not discovered again (a marker planted in the kept discovery
// survives the next status), a new CRD shows at once (its ETag moved), and
// the kept discovery is dropped after the interval (the clock is moved
// rather than waited for) and after the member failed a probe.
func testDiscoveryInterval(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{Watch: true, DiscoveryInterval: time.Hour})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Invalidate(m.Name) })
	now := time.Now()
	c.discovered.now = func() time.Time { return now }
	// enabled says whether the status lists resource in group version gv.
	enabled := func(status api.ClusterStatus, gv, resource string) bool {
		i := slices.IndexFunc(status.APIEnablements, func(e api.APIEnablement) bool { return e.GroupVersion == gv })
		return i >= 0 && slices.ContainsFunc(status.APIEnablements[i].Resources, func(r api.APIResource) bool { return r.Name == resource })
	}
	collect := func(t *testing.T) api.ClusterStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		status, err := CollectStatus(ctx, c)
		if err != nil {
			t.Fatalf("CollectStatus: %v", err)
		}
		return status
	}
	served := func(t *testing.T, resource string) bool {
		t.Helper()
		return enabled(collect(t), "mapper.flotilla.io/v1", resource)
	}
	// plant adds a resource no member serves to the kept discovery: it
	// shows in the next status only if that status reused the discovery.
	plant := func(t *testing.T) {
		t.Helper()
		c.discovered.mu.Lock()
		defer c.discovered.mu.Unlock()
		if !c.discovered.valid {
			t.Fatal("no discovery is kept (does the apiserver send ETags for /api and /apis?)")
		}
		c.discovered.enablements = append(slices.Clone(c.discovered.enablements),
			api.APIEnablement{GroupVersion: "planted.flotilla.io/v1", Resources: []api.APIResource{{Name: "markers", Kind: "Marker"}}})
	}
	reused := func(t *testing.T) bool {
		t.Helper()
		return enabled(collect(t), "planted.flotilla.io/v1", "markers")
	}
	addCRD := func(t *testing.T, kind, plural string) {
		t.Helper()
		if _, err := c.Dynamic.Resource(crdGVR).Create(t.Context(), crd(kind, plural), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create CRD: %v", err)
		}
		t.Cleanup(func() {
			_ = c.Dynamic.Resource(crdGVR).Delete(context.Background(), plural+".mapper.flotilla.io", metav1.DeleteOptions{})
		})
	}
	// servedSoon waits for a CRD the apiserver serves a moment after it
	// is created: each poll is one CollectStatus of the watching client.
	servedSoon := func(t *testing.T, plural string) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return served(t, plural), nil
		}); err != nil {
			t.Fatalf("CRD %s never shows in the watching client's status: %v", plural, err)
		}
	}
	if served(t, "sprockets") {
		t.Fatal("sprockets are served before their CRD exists")
	}
	plant(t)
	if !reused(t) {
		t.Error("an unchanged member was discovered again")
	}
	addCRD(t, "Sprocket", "sprockets")
	servedSoon(t, "sprockets")
	if reused(t) {
		t.Error("a member whose discovery changed kept the old discovery")
	}

	plant(t)
	now = now.Add(59 * time.Minute)
	if !reused(t) {
		t.Error("an unchanged member was discovered again within the interval")
	}
	now = now.Add(time.Minute)
	if reused(t) {
		t.Error("the kept discovery outlived its interval")
	}

	plant(t)
	c.discovered.forget() // what a failed probe does
	if reused(t) {
		t.Error("a member that failed a probe is not discovered again")
	}
	addCRD(t, "Cog", "cogs")
	servedSoon(t, "cogs")
}

// testWatchStops: the informers start with the first summary and leave no
// goroutine behind once the Cluster is forgotten (Cache.Invalidate) or its
// connection changes (Cache.Get with another one).
func testWatchStops(t *testing.T, m *testenv.Cluster) {
	for _, end := range []struct {
		name string
		do   func(cache *Cache)
	}{
		{"Cluster deleted", func(cache *Cache) { cache.Invalidate(m.Name) }},
		{"credentials changed", func(cache *Cache) {
			conn := tokenConn(m)
			conn.TLSServerName = "localhost"
			if _, err := cache.Get(t.Context(), m.Name, conn); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			cache := NewCache(CacheOptions{Watch: true})
			c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Probe(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := goleak.IgnoreCurrent()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if _, _, err := c.summarize(ctx); err != nil {
				t.Fatalf("summarize: %v", err)
			}
			if _, err := c.EndpointSlices(ctx, "default", "web"); err != nil {
				t.Fatalf("endpoint slices: %v", err)
			}
			if goleak.Find(before) == nil {
				t.Fatal("no informer goroutine runs after the first summary")
			}
			end.do(cache)
			goleak.VerifyNone(t, before)
			cache.Invalidate(m.Name)
		})
	}
}
