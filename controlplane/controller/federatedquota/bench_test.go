package federatedquota

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Sizes of BenchmarkQuotaStatus: a namespace of benchBindings templates,
// each 3 replicas of 100m/128Mi over benchClusters clusters, every cluster
// assigned by the quota and reporting its ResourceQuota status.
const (
	benchBindings = 500
	benchClusters = 20
)

// benchQuota is the quota of the benchmark and its Works, as the execution
// controller leaves them (Applied, the member's ResourceQuota status).
func benchQuota(b *testing.B) (*policyv1.FederatedResourceQuota, []workv1.Work) {
	q := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "team", UID: "quota-uid"}}
	q.Spec.Overall = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("2Ti"), corev1.ResourcePods: resource.MustParse("5000")}
	var works []workv1.Work
	for i := range benchClusters {
		cluster := fmt.Sprintf("member-%02d", i)
		q.Spec.StaticAssignments = append(q.Spec.StaticAssignments, api.StaticClusterAssignment{ClusterName: cluster,
			Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50"), corev1.ResourceMemory: resource.MustParse("100Gi")}})
		w, err := shared.NewQuotaWork(q, cluster, "bench")
		if err != nil {
			b.Fatal(err)
		}
		status, err := json.Marshal(corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50"), corev1.ResourceMemory: resource.MustParse("100Gi")},
			Used: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*i)), corev1.ResourceMemory: resource.MustParse("3Gi")},
		})
		if err != nil {
			b.Fatal(err)
		}
		w.Status.Conditions = []metav1.Condition{{Type: api.ConditionWorkApplied, Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: metav1.Now()}}
		w.Status.ManifestStatuses = []api.ManifestStatus{{
			Identifier: api.ResourceIdentifier{Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", Namespace: "team", Name: "team"},
			Status:     &runtime.RawExtension{Raw: status},
		}}
		works = append(works, *w)
	}
	return q, works
}

// benchBinding is template i's binding: 3 replicas over three clusters.
func benchBinding(i int) *workv1.ResourceBinding {
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("app-%d-deployment", i)}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team", Name: fmt.Sprintf("app-%d", i)}
	rb.Spec.Replicas = 3
	rb.Spec.ReplicaRequirements = &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
	for j := range 3 {
		rb.Spec.Clusters = append(rb.Spec.Clusters, api.TargetCluster{Name: fmt.Sprintf("member-%02d", (i+j)%benchClusters), Replicas: 1})
	}
	return rb
}

// BenchmarkQuotaStatus measures one quota's status pass, in p50/p99 µs:
// "aggregate" is the pure part (the members' ResourceQuota statuses from
// the Works, overallUsed from the bindings), "write" is what the
// controller does on every change, against a real host apiserver: list the
// namespace's bindings from the informer cache, aggregate, and patch the
// status.
func BenchmarkQuotaStatus(b *testing.B) {
	q, works := benchQuota(b)
	bindings := make([]*workv1.ResourceBinding, benchBindings)
	for i := range bindings {
		bindings[i] = benchBinding(i)
	}
	b.Run(fmt.Sprintf("bindings=%d/clusters=%d/aggregate", benchBindings, benchClusters), func(b *testing.B) {
		samples := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			used := corev1.ResourceList{}
			for _, rb := range bindings {
				used = api.AddResources(used, api.BindingUsage(&rb.Spec))
			}
			st := api.FederatedResourceQuotaStatus{Overall: q.Spec.Overall, OverallUsed: api.ChargedUsage(q.Spec.Overall, used), AggregatedStatus: aggregated(q, works)}
			samples = append(samples, time.Since(start))
			if len(st.AggregatedStatus) != benchClusters {
				b.Fatalf("aggregated %d clusters, want %d", len(st.AggregatedStatus), benchClusters)
			}
		}
		reportPercentiles(b, samples)
	})
	b.Run(fmt.Sprintf("bindings=%d/clusters=%d/write", benchBindings, benchClusters), func(b *testing.B) {
		env := testenv.Start(b, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
		// controllertest would import this package through controller.Setup.
		scheme, err := shared.NewScheme()
		if err != nil {
			b.Fatal(err)
		}
		hub, err := client.New(env.Clusters[0].RESTConfig(), client.Options{Scheme: scheme})
		if err != nil {
			b.Fatal(err)
		}
		if err := crd.Install(b.Context(), hub, time.Minute); err != nil {
			b.Fatal(err)
		}
		testkit.MustCreate(b, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
		live := q.DeepCopy()
		live.UID = ""
		testkit.MustCreate(b, hub, live)
		for _, rb := range bindings {
			testkit.MustCreate(b, hub, rb.DeepCopy())
		}
		for i := range works {
			works[i].Labels[shared.LabelQuotaID] = string(live.UID)
		}
		// Reads from an informer cache, writes to the apiserver: the
		// manager's client, as the controller has it.
		informers, err := cache.New(env.Clusters[0].RESTConfig(), cache.Options{Scheme: scheme})
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = informers.Start(b.Context()) }()
		cached, err := client.New(env.Clusters[0].RESTConfig(), client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: informers}})
		if err != nil {
			b.Fatal(err)
		}
		var warm workv1.ResourceBindingList
		if err := cached.List(b.Context(), &warm, client.InNamespace("team")); err != nil || len(warm.Items) != benchBindings {
			b.Fatalf("cache: %d bindings, %v", len(warm.Items), err)
		}
		s := &quotaSync{client: cached}
		samples := make([]time.Duration, 0, b.N)
		for b.Loop() {
			var cur policyv1.FederatedResourceQuota
			if err := hub.Get(b.Context(), client.ObjectKeyFromObject(live), &cur); err != nil {
				b.Fatal(err)
			}
			// A status from before a change, so every pass writes.
			cur.Status = api.FederatedResourceQuotaStatus{}
			start := time.Now()
			if err := s.writeStatus(b.Context(), &cur, works); err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(start))
			if len(cur.Status.AggregatedStatus) != benchClusters || cur.Status.OverallUsed.Cpu().String() != "150" {
				b.Fatalf("status %d clusters, cpu used %s; want %d and 150", len(cur.Status.AggregatedStatus), cur.Status.OverallUsed.Cpu(), benchClusters)
			}
		}
		reportPercentiles(b, samples)
	})
}

// reportPercentiles reports the p50 and p99 of samples in µs.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds()), "p99-µs")
}
