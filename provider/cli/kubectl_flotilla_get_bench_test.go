package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

var benchDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// benchDeployment is a Deployment as a member returns it: labels, the
// last-applied annotation, managed fields, a two-container pod template
// and a status with conditions.
func benchDeployment(ns, name string) appsv1.Deployment {
	labels := map[string]string{"app": name, "app.kubernetes.io/part-of": "shop", "team": "payments"}
	container := func(n, image string) corev1.Container {
		return corev1.Container{Name: n, Image: image, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt(8080)}}, PeriodSeconds: 10},
		}
	}
	now := metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	return appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "6f1f6c4e-0c55-4a4e-9f6e-1b0f7c1d2e3f", ResourceVersion: "123456", Generation: 3,
			CreationTimestamp: now, Labels: labels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3",
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"spec":{"replicas":3}}`},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
				Time: &now, FieldsType: "FieldsV1", Subresource: "status",
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:availableReplicas":{},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container("app", "registry.example.com/shop/"+name+":1.4.2"), container("sidecar", "registry.example.com/proxy:2.1")}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "` + name + `-7c9d8b5f6d" has successfully progressed.`},
			}},
	}
}

// memberLists serves, for every path /c/<cluster>/apis/apps/v1/deployments,
// the same list of perCluster Deployments over 10 namespaces, and holds
// watches open until the client leaves: members whose objects do not
// change, read by the cache's real informers over HTTP.
func memberLists(b testing.TB, perCluster int) *httptest.Server {
	b.Helper()
	list := appsv1.DeploymentList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DeploymentList"}, ListMeta: metav1.ListMeta{ResourceVersion: "123456"}}
	for i := range perCluster {
		list.Items = append(list.Items, benchDeployment(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("app-%04d", i)))
	}
	body, err := json.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	// client-go's reflector lists by a watch with sendInitialEvents (the
	// WatchList feature): every object ADDED, then the bookmark that ends
	// the initial events.
	var stream bytes.Buffer
	enc := json.NewEncoder(&stream)
	for i := range list.Items {
		if err := enc.Encode(map[string]any{"type": "ADDED", "object": &list.Items[i]}); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": "Deployment", "apiVersion": "apps/v1",
		"metadata": map[string]any{"resourceVersion": "123456", "annotations": map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}}); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				_, _ = w.Write(stream.Bytes())
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write(body)
	}))
	b.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// liveHeap returns the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkGetDeploymentsAllNamespaces is what a user waits for in
// `kubectl flotilla get deployments -A --source=cache` over 100 cached
// clusters x 1,000 Deployments: the request over HTTP to the search
// cache's served handler, its encoding, the plugin's decoding and its
// printing of the table (to a discarding writer), per call. The cache is
// filled by its own informers listing members over HTTP. Reports p50-ms
// and p99-ms over the calls, MB/response, and the live heap the cache
// holds per object (cache-bytes/object: informer stores included).
func BenchmarkGetDeploymentsAllNamespaces(b *testing.B) {
	clusters, perCluster := benchSize()
	// The testing package calls a benchmark once with b.N=1 before the
	// measured run: fill the cache once for both, and keep it.
	getBench.once.Do(func() {
		before := liveHeap()
		fill := time.Now()
		getBench.cache = filledCache(keepTB{b}, clusters, perCluster)
		getBench.filled = time.Since(fill)
		getBench.perObject = float64(liveHeap()-before) / float64(clusters*perCluster)
	})
	if getBench.cache == nil {
		b.Fatal("the cache was not filled")
	}
	c, filled, perObject := getBench.cache, getBench.filled, getBench.perObject
	srv := searchServer(b, c)
	o := getCommand{getOptions: getOptions{stderr: io.Discard, allNamespaces: true}, source: sourceCache}
	u := srv.URL + fleetview.SearchPrefix + "/apis/apps/v1/deployments"

	times := make([]time.Duration, 0, b.N)
	var size, lines int
	b.ResetTimer()
	for range b.N {
		var out countingLines
		start := time.Now()
		results, err := o.readCache(srv.Client(), u, benchDeployments, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := o.print(results, &out); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		size, lines = out.n, out.lines
	}
	b.StopTimer()
	if lines != clusters*perCluster+1 {
		b.Fatalf("printed %d lines, want a header and %d rows", lines, clusters*perCluster)
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(size)/1e6, "MB/printed")
	b.ReportMetric(perObject, "cache-bytes/object")
	b.ReportMetric(filled.Seconds(), "fill-s")
}

// getBench is the benchmark's cache, filled once per process.
var getBench struct {
	once      sync.Once
	cache     *fleetview.Cache
	filled    time.Duration
	perObject float64
}

// keepTB is a testing.TB whose cleanups never run: what it builds lives as
// long as the process.
type keepTB struct{ testing.TB }

func (keepTB) Cleanup(func()) {}

// countingLines discards what is printed, counting bytes and lines.
type countingLines struct{ n, lines int }

func (w *countingLines) Write(p []byte) (int, error) {
	w.n += len(p)
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// benchSize is 100 clusters x 1,000 Deployments, or FLOTILLA_BENCH_GET=CxN.
func benchSize() (int, int) {
	if v := os.Getenv("FLOTILLA_BENCH_GET"); v != "" {
		var c, n int
		if _, err := fmt.Sscanf(v, "%dx%d", &c, &n); err == nil && c > 0 && n > 0 {
			return c, n
		}
	}
	return 100, 1000
}

// filledCache is a search cache of Deployments over clusters members of
// perCluster objects each, filled by its informers, once synced.
func filledCache(b testing.TB, clusters, perCluster int) *fleetview.Cache {
	b.Helper()
	members := memberLists(b, perCluster)
	c := fleetview.NewCache(fleetview.CacheOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = c.Start(ctx) }()
	b.Cleanup(cancel)
	var sources []fleetview.Source
	for i := range clusters {
		name := fmt.Sprintf("member-%03d", i)
		dc, err := dynamic.NewForConfig(&rest.Config{Host: members.URL + "/c/" + name, QPS: -1})
		if err != nil {
			b.Fatal(err)
		}
		sources = append(sources, fleetview.Source{Cluster: name, Client: dc, Fingerprint: name})
	}
	c.Set([]fleetview.Kind{{Resource: benchDeployments, GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespaced: true, Sources: sources}})
	for deadline := time.Now().Add(30 * time.Minute); !c.Synced(benchDeployments); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the cache did not sync in 30 minutes")
		}
	}

	return c
}

// searchServer serves c's search handler over HTTP to a user who may list
// everywhere.
func searchServer(b testing.TB, c *fleetview.Cache) *httptest.Server {
	b.Helper()
	allowAll := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	})
	search := fleetview.SearchHandler(c, allowAll)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		search.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: "admin"})))
	}))
	b.Cleanup(srv.Close)

	return srv
}
