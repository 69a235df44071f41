package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// BenchmarkPages measures the server time of the fleet page and of the
// first workloads page at 200 clusters and 2,000 workloads (bindings in
// 20 namespaces, each on 3 clusters): a real host apiserver holds the
// objects and answers the access reviews, a controller-runtime informer
// cache serves the reads, as in the control plane. Each sample is one
// request through the whole handler (authentication and authorization,
// both cached, then list and render), reported as p50 and p99 in ms. The
// interactive= cases load the same pages in headless Chromium and report
// the time from navigation to the page being usable.
func BenchmarkPages(b *testing.B) {
	const clusters, workloads, namespaces = 200, 2000, 20
	host := testenv.Start(b, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	scheme := controllertest.Scheme(b)
	hub := controllertest.Host(b, host, scheme)
	for i := range namespaces {
		testkit.MustCreate(b, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%02d", i)}})
	}
	parallel(b, clusters, func(i int) error { return createCluster(b, hub, i) })
	parallel(b, workloads, func(i int) error { return createBinding(b, hub, i, i%namespaces, clusters) })

	reader, err := cache.New(host.RESTConfig(), cache.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range []client.Object{&clusterv1.Cluster{}, &workv1.ResourceBinding{}} {
		if _, err := reader.GetInformer(b.Context(), o); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = reader.Start(b.Context()) }()
	if !reader.WaitForCacheSync(b.Context()) {
		b.Fatal("the informer cache did not sync")
	}
	s, err := New(host.RESTConfig(), nil, Sources{Cache: reader}, 0)
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	for _, path := range []string{"/fleet", "/workloads"} {
		b.Run(fmt.Sprintf("clusters=%d/workloads=%d/page=%s", clusters, workloads, path[1:]), func(b *testing.B) {
			get := func() time.Duration {
				req := httptest.NewRequestWithContext(b.Context(), http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+host.Token)
				rec := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(rec, req)
				took := time.Since(start)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body.String())
				}
				return took
			}
			get() // the first request fills the authentication and authorization caches
			var samples []time.Duration
			for b.Loop() {
				samples = append(samples, get())
			}
			reportPercentiles(b, samples)
		})
	}
	// The same pages in Debian's headless Chromium over HTTPS: from the
	// navigation to the page's DOM built and its script run
	// (domContentLoadedEventEnd), with the server time, the transfer and
	// the parsing of the page's 50 rows.
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		b.Fatal("chromium is not installed: `make prerequisites` installs Debian's chromium (apt-get install -y chromium)")
	}
	srv := httptest.NewTLSServer(h)
	b.Cleanup(srv.Close)
	allocator, cancel := chromedp.NewExecAllocator(b.Context(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1366, 800),
		chromedp.Flag("ignore-certificate-errors", true))...)
	b.Cleanup(cancel)
	browser := tab(b, allocator, host.Token)
	for _, path := range []string{"/fleet", "/workloads"} {
		b.Run(fmt.Sprintf("clusters=%d/workloads=%d/interactive=%s", clusters, workloads, path[1:]), func(b *testing.B) {
			interactive(b, browser, srv.URL+path) // warms the browser and the caches
			var samples, firstByte, lastByte, parsed []time.Duration
			fetched, size := 0, 0.0
			ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
			for b.Loop() {
				tm := navigate(b, browser, srv.URL+path)
				samples = append(samples, ms(tm.Interactive))
				firstByte, lastByte, parsed = append(firstByte, ms(tm.FirstByte)), append(lastByte, ms(tm.LastByte)), append(parsed, ms(tm.Parsed))
				fetched += tm.Fetched
				size = tm.Bytes
			}
			reportPercentiles(b, samples)
			// Where the time goes, medians: the page's first and last byte,
			// its DOM parsed; the assets fetched per load and the page's size.
			for _, m := range []struct {
				unit    string
				samples []time.Duration
			}{{"first-byte-p50-ms", firstByte}, {"last-byte-p50-ms", lastByte}, {"parsed-p50-ms", parsed}} {
				sort.Slice(m.samples, func(i, j int) bool { return m.samples[i] < m.samples[j] })
				b.ReportMetric(float64(m.samples[len(m.samples)/2].Microseconds())/1000, m.unit)
			}
			b.ReportMetric(float64(fetched)/float64(len(samples)), "assets-fetched/load")
			b.ReportMetric(size/1024, "page-KiB")
		})
	}
}

// reportPercentiles reports the p50 and p99 of samples in ms.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
}

// parallel runs f for 0..n-1 on 8 workers and fails on the first error.
func parallel(b *testing.B, n int, f func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func createCluster(b *testing.B, hub client.Client, i int) error {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cluster-%03d", i)},
		Spec: api.ClusterSpec{APIEndpoint: "https://127.0.0.1:1", Region: fmt.Sprintf("region-%d", i%5), SyncMode: api.Push}}
	ready := metav1.ConditionTrue
	if i%25 == 0 {
		ready = metav1.ConditionFalse
		c.Spec.Taints = []corev1.Taint{{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}}
	}
	if err := hub.Create(b.Context(), c); err != nil {
		return fmt.Errorf("create cluster %d: %w", i, err)
	}
	c.Status = api.ClusterStatus{
		KubernetesVersion: "v1.35.4",
		Conditions:        []metav1.Condition{{Type: api.ClusterConditionReady, Status: ready, Reason: api.ReasonClusterReady, LastTransitionTime: metav1.Now()}},
		NodeSummary:       &api.NodeSummary{TotalNum: 10, ReadyNum: 10},
		ResourceSummary: &api.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("320"), corev1.ResourceMemory: resource.MustParse("2560Gi"), corev1.ResourcePods: resource.MustParse("1100")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100500m"), corev1.ResourceMemory: resource.MustParse("700Gi"), corev1.ResourcePods: resource.MustParse("400")},
		},
	}
	if err := hub.Status().Update(b.Context(), c); err != nil {
		return fmt.Errorf("cluster %d status: %w", i, err)
	}
	return nil
}

func createBinding(b *testing.B, hub client.Client, i, ns, clusters int) error {
	name := fmt.Sprintf("app-%04d-deployment.apps", i)
	rb := &workv1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%02d", ns), Name: name},
		Spec: api.ResourceBindingSpec{
			Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: fmt.Sprintf("ns-%02d", ns), Name: fmt.Sprintf("app-%04d", i)},
			Replicas: 6,
		},
	}
	for k := range 3 {
		c := fmt.Sprintf("cluster-%03d", (i+k*7)%clusters)
		rb.Spec.Clusters = append(rb.Spec.Clusters, api.TargetCluster{Name: c, Replicas: int32(k + 1)})
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, api.AggregatedStatusItem{ClusterName: c, Applied: true, Health: api.ResourceHealthy})
	}
	status := rb.Status
	if err := hub.Create(b.Context(), rb); err != nil {
		return fmt.Errorf("create binding %d: %w", i, err)
	}
	rb.Status = status
	rb.Status.Conditions = []metav1.Condition{{Type: api.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: metav1.Now()}}
	if err := hub.Status().Update(b.Context(), rb); err != nil {
		return fmt.Errorf("binding %d status: %w", i, err)
	}
	return nil
}
