//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Sizes and limits of BenchmarkContinuousScale, from the environment.
const (
	envScaleClusters  = "FLOTILLA_BENCH_CLUSTERS"   // Cluster objects; default 200
	envScaleTemplates = "FLOTILLA_BENCH_TEMPLATES"  // Deployments; default 2000
	envScaleTimeout   = "FLOTILLA_BENCH_TIMEOUT"    // bound of the resync wait; default 30m
	envScaleSettle    = "FLOTILLA_BENCH_SETTLE"     // how long RSS is watched after the resync; default 60s
	envScaleQPS       = "FLOTILLA_BENCH_QPS"        // --kube-api-qps (burst 1.5×) of the control plane; unset: the binary's default
	envScaleProfile   = "FLOTILLA_BENCH_CPUPROFILE" // file for a CPU profile of the control plane's first 30 s; unset: none
)

// scaleRegions is how many regions the Cluster objects are spread over.
const scaleRegions = 10

// BenchmarkContinuousScale measures a full resync of the continuous control
// plane: a host apiserver (apiserver-only testenv cluster) is filled with
// FLOTILLA_BENCH_CLUSTERS Cluster objects whose status the harness writes
// (Ready, API enablements, node and resource summaries), five
// PropagationPolicies and FLOTILLA_BENCH_TEMPLATES Deployments. Then the
// `controlplane` subcommand starts in a process of its own and the benchmark
// waits until every template has a ResourceBinding that is scheduled
// (Scheduled=True for its generation, spec.clusters set).
//
// The Clusters point at no member: scheduling needs only their status, but
// execution cannot reach them, so the figure stops at "every binding
// scheduled". The control plane runs with --cluster-failure-threshold=24h so
// that its probes, which fail at once for a Cluster without credentials, do
// not turn the harness's Ready status into NotReady during the run.
//
// Metrics: resync-s (process start → every binding scheduled; the start
// includes CRD installation, cache sync and binding creation), peak-rss-MB
// (VmHWM of the process, read after a settle period in which the binding and
// execution controllers keep working), rss-at-resync-MB, setup-s (how long
// the harness took to create the objects), works (Work objects at the end).
func BenchmarkContinuousScale(b *testing.B) {
	nClusters := testkit.EnvInt(b, envScaleClusters, 200)
	nTemplates := testkit.EnvInt(b, envScaleTemplates, 2000)
	timeout := testkit.EnvDuration(b, envScaleTimeout, 30*time.Minute)
	settle := testkit.EnvDuration(b, envScaleSettle, 60*time.Second)
	binary := benchBinary(b)
	ctx := b.Context()

	// The harness's limits, not the measured process's.
	fleet, cfg, scheme, hub := startBenchHost(b, 2000, 4000)
	host := fleet.Clusters[0]

	setupStart := time.Now()
	if err := crd.Install(ctx, hub, time.Minute); err != nil {
		b.Fatal(err)
	}
	if err := createScaleFleet(ctx, hub, nClusters, nTemplates); err != nil {
		b.Fatal(err)
	}
	setup := time.Since(setupStart)
	b.Logf("harness: %d clusters, %d deployments, %d policies created in %v", nClusters, nTemplates, len(scalePolicies), setup.Round(time.Millisecond))

	requestsBefore, err := hostRequests(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	cpu := newCPUMeter(fleet)
	cpuBefore := cpu.read()

	// The Clusters have no credentials: every probe fails at once. A day
	// of failure threshold keeps the harness's Ready status for the run.
	args := []string{"--log-level=warn", "--cluster-failure-threshold=24h"}
	if os.Getenv(envScaleQPS) != "" {
		qps := testkit.EnvInt(b, envScaleQPS, 0)
		args = append(args, fmt.Sprintf("--kube-api-qps=%d", qps), fmt.Sprintf("--kube-api-burst=%d", qps*3/2))
	}
	profile := os.Getenv(envScaleProfile)
	pprofAddr := ""
	if profile != "" {
		pprofAddr = benchFreeAddr(b)
		args = append(args, "--pprof-bind-address="+pprofAddr)
	}
	watched := watchBindings(ctx, b, cfg, scheme)
	b.ResetTimer()
	proc := startBenchControlplane(b, binary, host.KubeconfigPath, fleet.Dir, args...)
	cpu["controlplane"] = proc.cmd.Process.Pid
	if profile != "" {
		go benchCPUProfile(ctx, b, pprofAddr, profile, 30*time.Second)
	}
	var lastLog time.Time
	err = benchPoll(ctx, "every binding scheduled", time.Second, timeout, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		bindings, scheduled, err := countScheduled(ctx, watched)
		if err != nil {
			return false, "", err
		}
		progress := fmt.Sprintf("%d bindings, %d scheduled of %d templates", bindings, scheduled, nTemplates)
		if time.Since(lastLog) > 30*time.Second {
			lastLog = time.Now()
			b.Logf("after %v: %s", time.Since(proc.started).Round(time.Second), progress)
		}
		return scheduled == nTemplates, progress, nil
	})
	resync := time.Since(proc.started)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	cpuAtResync := cpu.read()
	requestsAtResync, err := hostRequests(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	delta := requestsBetween(requestsBefore, requestsAtResync)
	writes := writesIn(delta)
	b.Logf("host requests from start to every binding scheduled (%.0f writes, %.2f per binding; CPU: %s):%s",
		writes, writes/float64(nTemplates), cpuBetween(cpuBefore, cpuAtResync), requestTable(delta, nTemplates))
	_, atResync, err := proc.memory()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("every binding scheduled after %v; RSS %d MB; watching for %v more", resync.Round(time.Millisecond), atResync>>20, settle)

	// The binding and execution controllers keep going after the schedule
	// (Works, failed applies to unreachable members): the peak is read after
	// they have had time to reach their steady state.
	select {
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	case <-time.After(settle):
	}
	if err := proc.alive(); err != nil {
		b.Fatal(err)
	}
	peak, current, err := proc.memory()
	if err != nil {
		b.Fatal(err)
	}
	works, err := countWorks(ctx, hub)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("after settle: VmHWM %d MB, VmRSS %d MB, %d Works", peak>>20, current>>20, works)
	b.ReportMetric(resync.Seconds(), "resync-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(atResync)/(1<<20), "rss-at-resync-MB")
	b.ReportMetric(setup.Seconds(), "setup-s")
	b.ReportMetric(float64(works), "works")
	b.ReportMetric(writes/float64(nTemplates), "writes/binding")
	b.ReportMetric(0, "ns/op") // the figures above are the result, not the loop time
	if os.Getenv(testenv.KeepEnv) == "1" {
		b.Logf("fleet kept in %s", filepath.Dir(proc.logPath))
	}
}

// startBenchHost starts an apiserver-only host and returns a client of it
// with the given client-side limits (qps < 0: none).
func startBenchHost(b *testing.B, qps float32, burst int) (*testenv.Fleet, *rest.Config, *runtime.Scheme, client.Client) {
	b.Helper()
	fleet := testenv.Start(b, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly})
	scheme, err := shared.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	cfg := fleet.Clusters[0].RESTConfig()
	cfg.QPS, cfg.Burst = qps, burst
	hub, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	return fleet, cfg, scheme, hub
}

// scalePolicies are the PropagationPolicies of the scale benchmark, one per
// namespace bench-1 … bench-5, each claiming every Deployment there. They
// cover the scheduler's main paths; each places a template on a few clusters.
var scalePolicies = []string{
	// dynamic weights over two regions' clusters
	`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  clusterAffinity:
    labelSelector:
      matchExpressions: [{key: region, operator: In, values: [r0, r1]}]
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
    weightPreference: {dynamicWeight: AvailableReplicas}
`,
	// static weights 2:1 between two regions
	`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
    weightPreference:
      staticWeightList:
      - targetCluster: {labelSelector: {matchLabels: {region: r2}}}
        weight: 2
      - targetCluster: {labelSelector: {matchLabels: {region: r3}}}
        weight: 1
`,
	// duplicated to three named clusters
	`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  clusterAffinity: {clusterNames: [member-0001, member-0002, member-0003]}
  replicaScheduling: {replicaSchedulingType: Duplicated}
`,
	// spread over two regions, two to four clusters, aggregated
	`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  spreadConstraints:
  - {spreadByField: region, minGroups: 2, maxGroups: 2}
  - {spreadByField: cluster, minGroups: 2, maxGroups: 4}
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Aggregated
`,
	// dynamic weights over every cluster
	`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
    weightPreference: {dynamicWeight: AvailableReplicas}
`,
}

// createScaleFleet creates the namespaces, policies, Clusters (with status)
// and Deployments of the scale benchmark, in parallel.
func createScaleFleet(ctx context.Context, hub client.Client, nClusters, nTemplates int) error {
	for i, spec := range scalePolicies {
		ns := fmt.Sprintf("bench-%d", i+1)
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"}}
		if err := yaml.UnmarshalStrict([]byte(spec), &pp.Spec); err != nil {
			return fmt.Errorf("decode policy %s/all: %w", ns, err)
		}
		if err := hub.Create(ctx, pp); err != nil {
			return fmt.Errorf("create policy %s/all: %w", ns, err)
		}
	}
	const workers = 32
	if err := benchParallel(ctx, nClusters, workers, func(ctx context.Context, i int) error {
		return createReadyCluster(ctx, hub, i)
	}); err != nil {
		return err
	}
	return benchParallel(ctx, nTemplates, workers, func(ctx context.Context, i int) error {
		d := scaleDeployment(i)
		if err := hub.Create(ctx, d); err != nil {
			return fmt.Errorf("create deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		return nil
	})
}

// createReadyCluster creates Cluster member-NNNN and writes the status a
// healthy member would report: Ready, API enablements marked complete, ten
// ready nodes and their resources.
func createReadyCluster(ctx context.Context, hub client.Client, i int) error {
	name := fmt.Sprintf("member-%04d", i+1)
	region := fmt.Sprintf("r%d", i%scaleRegions)
	cl := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"region": region, "tier": "prod"}},
		Spec: api.ClusterSpec{
			APIEndpoint: fmt.Sprintf("https://%s.invalid:6443", name),
			Provider:    "bench",
			Region:      region,
			Zones:       []string{region + "-a", region + "-b"},
		},
	}
	if err := hub.Create(ctx, cl); err != nil {
		return fmt.Errorf("create cluster %s: %w", name, err)
	}
	now := metav1.Now()
	cl.Status = api.ClusterStatus{
		KubernetesVersion: "v1.35.4",
		APIEnablements: []api.APIEnablement{
			{GroupVersion: "v1", Resources: []api.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "secrets", Kind: "Secret"}, {Name: "services", Kind: "Service"}, {Name: "namespaces", Kind: "Namespace"}}},
			{GroupVersion: "apps/v1", Resources: []api.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "statefulsets", Kind: "StatefulSet"}, {Name: "daemonsets", Kind: "DaemonSet"}}},
			{GroupVersion: "batch/v1", Resources: []api.APIResource{{Name: "jobs", Kind: "Job"}, {Name: "cronjobs", Kind: "CronJob"}}},
		},
		Conditions: []metav1.Condition{
			{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "set by the benchmark", LastTransitionTime: now},
			{Type: api.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue, Reason: api.ReasonAPIEnablementsComplete, Message: "set by the benchmark", LastTransitionTime: now},
		},
		NodeSummary: &api.NodeSummary{TotalNum: 10, ReadyNum: 10},
		ResourceSummary: &api.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("320"), corev1.ResourceMemory: resource.MustParse("1280Gi"), corev1.ResourcePods: resource.MustParse("1100")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(10 + i%50)), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("100")},
		},
	}
	if err := hub.Status().Update(ctx, cl); err != nil {
		return fmt.Errorf("write status of cluster %s: %w", name, err)
	}
	return nil
}

// scaleDeployment is template i: namespace bench-1 … bench-5 in turn, 2–5
// replicas with requests, so the estimator has something to divide.
func scaleDeployment(i int) *appsv1.Deployment {
	name := fmt.Sprintf("app-%05d", i)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("bench-%d", i%len(scalePolicies)+1), Name: name, Labels: map[string]string{"team": fmt.Sprintf("t%d", i%20)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(2 + i%4)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
					}},
				}}},
			},
		},
	}
}

// countScheduled counts the ResourceBindings a watch has seen, and those
// scheduled for their current generation. A watch costs the host little;
// listing 10,000 bindings every second took a share of the apiserver's CPU
// away from the process measured.
func countScheduled(ctx context.Context, bindings client.Reader) (total, scheduled int, err error) {
	var list workv1.ResourceBindingList
	if err := bindings.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, fmt.Errorf("list bindings: %w", err)
	}
	for i := range list.Items {
		rb := &list.Items[i]
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
		if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == rb.Generation && len(rb.Spec.Clusters) > 0 {
			scheduled++
		}
	}
	return len(list.Items), scheduled, nil
}

// watchBindings starts an informer cache of the host's ResourceBindings
// for countScheduled; it stops with ctx.
func watchBindings(ctx context.Context, b *testing.B, cfg *rest.Config, scheme *runtime.Scheme) client.Reader {
	b.Helper()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &workv1.ResourceBinding{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("binding watch of the benchmark did not sync")
	}
	return c
}

// countWorks counts Work objects by their metadata only.
func countWorks(ctx context.Context, hub client.Client) (int, error) {
	n, cont := 0, ""
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(workv1.GroupVersion.WithKind("WorkList"))
		if err := hub.List(ctx, list, client.Limit(5000), client.Continue(cont)); err != nil {
			return 0, fmt.Errorf("list works: %w", err)
		}
		n += len(list.Items)
		if cont = list.Continue; cont == "" {
			return n, nil
		}
	}
}
