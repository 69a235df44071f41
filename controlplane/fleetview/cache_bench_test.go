package fleetview

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// typicalDeployment is a Deployment as a member returns it: labels, the
// last-applied annotation, managed fields of two managers, a two-container
// pod template with resources and probes, and a status with conditions.
func typicalDeployment(ns, name string) *unstructured.Unstructured {
	labels := map[string]string{"app": name, "app.kubernetes.io/part-of": "shop", "team": "payments"}
	container := func(n, image string) corev1.Container {
		return corev1.Container{Name: n, Image: image, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
			ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intOrString(8080)}}, PeriodSeconds: 10},
			ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}
	}
	now := metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "6f1f6c4e-0c55-4a4e-9f6e-1b0f7c1d2e3f", ResourceVersion: "123456", Generation: 3,
			CreationTimestamp: now, Labels: labels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3",
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"` + name + `"},"name":"` + name + `","namespace":"` + ns + `"},"spec":{"replicas":3}}`},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)},
			}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container("app", "registry.example.com/shop/"+name+":1.4.2"), container("sidecar", "registry.example.com/proxy:2.1")},
					RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
					TerminationGracePeriodSeconds: ptr.To[int64](30)}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}, RevisionHistoryLimit: ptr.To[int32](10),
			ProgressDeadlineSeconds: ptr.To[int32](600)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "` + name + `-7c9d8b5f6d" has successfully progressed.`},
			}},
	}
	obj, err := runtimeapi.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// heapAfter returns the live heap after a collection.
func heapAfter() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSearchCacheMemory measures what the cache keeps per typical
// Deployment (bytes/object), beside what keeping the decoded object
// without managed fields would cost (unstructured-bytes/object).
func BenchmarkSearchCacheMemory(b *testing.B) {
	const n = 10000
	in := make([]*unstructured.Unstructured, n)
	for i := range in {
		in[i] = typicalDeployment(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("app-%d", i))
	}
	b.ResetTimer()
	for range b.N {
		before := heapAfter()
		kept := make([]*cachedObject, n)
		for i, u := range in {
			o, err := compact(u, "member-1")
			if err != nil {
				b.Fatal(err)
			}
			kept[i] = o
		}
		after := heapAfter()
		b.ReportMetric(float64(after-before)/n, "bytes/object")
		b.ReportMetric(float64(len(kept[0].raw)), "json-bytes/object")
		runtime.KeepAlive(kept)

		before = heapAfter()
		decoded := make([]*unstructured.Unstructured, n)
		for i, u := range in {
			cp := u.DeepCopy()
			cp.SetManagedFields(nil)
			decoded[i] = cp
		}
		after = heapAfter()
		b.ReportMetric(float64(after-before)/n, "unstructured-bytes/object")
		runtime.KeepAlive(decoded)
	}
}

type allowNamespaces map[string]bool

func (a allowNamespaces) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if a["*"] || a[attrs.GetNamespace()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// benchCache fills a cache with clusters x perCluster typical Deployments
// over 10 namespaces, straight into each member's informer store (no
// member runs: this measures serving, not listing members).
func benchCache(b *testing.B, clusters, perCluster int) *Cache {
	b.Helper()
	c := NewCache(CacheOptions{})
	ck := &cachedKind{gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true,
		clusters: map[string]*memberInformer{}, watchers: map[*watcher]struct{}{}}
	for ci := range clusters {
		name := fmt.Sprintf("member-%03d", ci)
		inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for i := range perCluster {
			o, err := compact(typicalDeployment(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("app-%d", i)), name)
			if err != nil {
				b.Fatal(err)
			}
			if err := inf.GetIndexer().Add(o); err != nil {
				b.Fatal(err)
			}
		}
		ck.clusters[name] = &memberInformer{informer: inf, cancel: func() {}}
	}
	c.kinds[schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}] = ck
	return c
}

// BenchmarkSearchList is `kubectl get deployments -A` through the search
// cache over 100 clusters x 1,000 Deployments: the server's time from the
// authenticated request to the last byte of the list, for a user who may
// list everywhere (one access review) and for a tenant who may list one
// namespace of ten (one review per namespace). p50-ms and p99-ms.
func BenchmarkSearchList(b *testing.B) {
	c := benchCache(b, 100, 1000)
	// The decoded objects the fill made are garbage a running cache
	// would not carry; collect them before timing.
	runtime.GC()
	for _, tc := range []struct {
		who   string
		allow allowNamespaces
	}{{"admin", allowNamespaces{"*": true}}, {"tenant", allowNamespaces{"ns-3": true}}} {
		b.Run("user="+tc.who, func(b *testing.B) {
			s := &Server{opts: Options{Search: c}, authz: authorizer.AuthorizerFunc(tc.allow.Authorize)}
			ctx := request.WithUser(context.Background(), &user.DefaultInfo{Name: tc.who})
			times := make([]time.Duration, 0, b.N)
			var size int
			b.ResetTimer()
			for range b.N {
				req := httptest.NewRequestWithContext(ctx, http.MethodGet, SearchPrefix+"/apis/apps/v1/deployments", nil)
				w := &countingWriter{header: http.Header{}}
				start := time.Now()
				s.serveSearch(w, req)
				times = append(times, time.Since(start))
				size = w.n
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(size)/1e6, "MB/response")
		})
	}
}

// countingWriter discards a response, counting its bytes.
type countingWriter struct {
	header http.Header
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return io.Discard.Write(p)
}

func intOrString(port int) intstr.IntOrString { return intstr.FromInt(port) }
