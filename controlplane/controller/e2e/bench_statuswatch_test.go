//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Sizes and flags of BenchmarkMemberStatusLatency, from the environment.
const (
	envStatusMembers   = "FLOTILLA_BENCH_STATUSWATCH_MEMBERS"   // member apiservers; default 10
	envStatusTemplates = "FLOTILLA_BENCH_STATUSWATCH_TEMPLATES" // Deployments, each Duplicated to every member; default 100
	envStatusTimeout   = "FLOTILLA_BENCH_STATUSWATCH_TIMEOUT"   // bound of each wait; default 20m
	envStatusArgs      = "FLOTILLA_BENCH_STATUSWATCH_ARGS"      // extra flags of the control plane, space-separated
	envStatusProfile   = "FLOTILLA_BENCH_STATUSWATCH_PROFILE"   // file for a CPU profile of the control plane's first 20 s of the burst (and FILE.goroutines, its goroutines 5 s in)
)

// statusNamespace holds the benchmark's templates, on the host and in
// every member.
const statusNamespace = "statuswatch"

// BenchmarkMemberStatusLatency measures how fast a member's status change
// reaches the host template: a host apiserver and
// FLOTILLA_BENCH_STATUSWATCH_MEMBERS member apiservers (apiserver-only, so
// no controller writes a member status but the harness),
// FLOTILLA_BENCH_STATUSWATCH_TEMPLATES one-replica Deployments Duplicated to
// every member (members × templates Works), and the `controlplane`
// subcommand in a process of its own with its default flags (plus
// FLOTILLA_BENCH_STATUSWATCH_ARGS).
//
// Once every member runs every Deployment and the host is quiet (no write
// for 5 s), the
// harness sets every member copy's status to one ready replica through the
// status subresource, as a member's deployment controller would. A
// template's latency is from the harness's last member write for it until
// an informer on the host sees its status.readyReplicas equal the member
// count. The host's apiserver_request_total is read around that phase
// (writes per member change) and around an idle window of 35 s after it (a
// whole default resync: the backstop must write nothing for an unchanged
// status).
//
// Metrics: work-p50-s, work-p99-s over the (template, member) pairs (the
// harness's member write until a host informer sees the Work report it);
// status-p50-s, status-p99-s, status-max-s over the templates;
// work-writes-per-change (Work status writes / member changes),
// host-writes-per-change (every host write but Leases and Events / member
// changes), idle-writes (host writes but Leases and Events in the idle
// window).
func BenchmarkMemberStatusLatency(b *testing.B) {
	nMembers := testkit.EnvInt(b, envStatusMembers, 10)
	nTemplates := testkit.EnvInt(b, envStatusTemplates, 100)
	timeout := testkit.EnvDuration(b, envStatusTimeout, 20*time.Minute)
	binary := benchBinary(b)
	ctx := b.Context()

	hostFleet, members, hub := benchHostAndMembers(b, nMembers)
	host := hostFleet.Clusters[0]
	memberClients := make([]client.Client, nMembers)
	for i, m := range members {
		mcfg := m.RESTConfig()
		mcfg.QPS, mcfg.Burst = 500, 1000
		var err error
		if memberClients[i], err = client.New(mcfg, client.Options{Scheme: hub.Scheme()}); err != nil {
			b.Fatal(err)
		}
	}
	cfg := benchHarnessConfig(host)
	ready, err := watchTemplateReady(ctx, cfg, int32(nMembers))
	if err != nil {
		b.Fatal(err)
	}
	works, err := watchWorkReady(ctx, cfg, hub.Scheme())
	if err != nil {
		b.Fatal(err)
	}
	if err := createStatusFleet(ctx, hub, members, nTemplates); err != nil {
		b.Fatal(err)
	}
	args := []string{"--log-level=warn"}
	if v := os.Getenv(envStatusArgs); v != "" {
		args = append(args, strings.Fields(v)...)
	}
	profile := os.Getenv(envStatusProfile)
	pprofAddr := ""
	if profile != "" {
		pprofAddr = benchFreeAddr(b)
		args = append(args, "--pprof-bind-address="+pprofAddr)
	}
	b.ResetTimer()
	proc := startBenchControlplane(b, binary, host.KubeconfigPath, hostFleet.Dir, args...)
	if err := benchPoll(ctx, "every member runs every Deployment", time.Second, timeout, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		n := 0
		for _, c := range memberClients {
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(statusNamespace)); err != nil {
				return false, "", fmt.Errorf("list deployments of a member: %w", err)
			}
			n += len(list.Items)
		}
		return n == nMembers*nTemplates, fmt.Sprintf("%d of %d", n, nMembers*nTemplates), nil
	}); err != nil {
		b.Fatal(err)
	}
	// The first observations and their status writes settle: the burst
	// must not queue behind them. Quiet is no host write (but Leases and
	// Events) for 5 s running; on a loaded machine the first pass over
	// every Work can take tens of seconds after the last apply.
	var before hostWrites
	quietSince := time.Now()
	if err := benchPoll(ctx, "the host is quiet for 5 s", time.Second, timeout, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		now, err := readHostWrites(ctx, cfg)
		if err != nil {
			return false, "", err
		}
		if n, _, _ := now.since(before).split(); before == nil || n > 0 {
			quietSince = time.Now()
		}
		before = now
		return time.Since(quietSince) >= 5*time.Second, "writes since the last look", nil
	}); err != nil {
		b.Fatal(err)
	}
	readsBefore, err := readMemberReads(ctx, members)
	if err != nil {
		b.Fatal(err)
	}
	if profile != "" {
		go benchCPUProfile(ctx, b, pprofAddr, profile, 20*time.Second)
		// Where the workers wait (member GET, host PATCH, a client rate
		// limiter) while the burst's queue is long.
		go benchGoroutines(ctx, b, pprofAddr, profile+".goroutines", 5*time.Second)
	}
	burst := time.Now()
	changed := make([]time.Time, nTemplates)
	pairs := map[string]time.Time{}
	var mu sync.Mutex
	if err := benchParallel(ctx, nMembers*nTemplates, 32, func(ctx context.Context, k int) error {
		m, i := k%nMembers, k/nMembers
		var d appsv1.Deployment
		key := client.ObjectKey{Namespace: statusNamespace, Name: statusName(i)}
		if err := memberClients[m].Get(ctx, key, &d); err != nil {
			return fmt.Errorf("read deployment %s in %s: %w", key, members[m].Name, err)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		if err := memberClients[m].Status().Update(ctx, &d); err != nil {
			return fmt.Errorf("set status of deployment %s in %s: %w", key, members[m].Name, err)
		}
		mu.Lock()
		changed[i] = time.Now()
		pairs[shared.ExecutionNamespace(members[m].Name)+"/"+shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: statusNamespace, Name: statusName(i)})] = changed[i]
		mu.Unlock()
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := benchPoll(ctx, "every host template reports every member ready", 200*time.Millisecond, timeout, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		n := ready.count()
		return n >= nTemplates, fmt.Sprintf("%d of %d templates", n, nTemplates), nil
	}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	// Writes still under way (bindings aggregating the last Works) finish.
	time.Sleep(5 * time.Second)
	after, err := readHostWrites(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	readsAfter, err := readMemberReads(ctx, members)
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(35 * time.Second)
	idle, err := readHostWrites(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}

	lat := make([]time.Duration, 0, nTemplates)
	for i := range nTemplates {
		if at, ok := ready.at(statusName(i)); ok {
			lat = append(lat, max(0, at.Sub(changed[i])))
		}
	}
	slices.Sort(lat)
	quantile := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	workLat := make([]time.Duration, 0, len(pairs))
	for key, at := range pairs {
		if seen, ok := works.at(key); ok {
			workLat = append(workLat, max(0, seen.Sub(at)))
		}
	}
	slices.Sort(workLat)
	if len(workLat) == 0 {
		b.Fatal("no Work reported its member's status")
	}
	workQuantile := func(q float64) time.Duration { return workLat[int(q*float64(len(workLat)-1))] }
	delta := after.since(before)
	writes, _, _ := delta.split()
	idleWrites, _, _ := idle.since(after).split()
	changes := float64(nMembers * nTemplates)
	b.Logf("%d members × %d templates: member change -> host template status p50 %v, p99 %v, max %v; host writes during the change: %s; in the 35 s after: %s",
		nMembers, nTemplates, quantile(0.5).Round(time.Millisecond), quantile(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond),
		delta, idle.since(after))
	// The harness read each Deployment once before writing its status.
	gets := readsAfter.gets - readsBefore.gets - changes
	b.Logf("control plane's member reads during the change: %.0f GETs of Deployments (%.2f per change), %.0f other GETs and LISTs",
		gets, gets/changes, readsAfter.other-readsBefore.other)
	b.Logf("member change -> its Work's status (%d of %d pairs seen): p50 %v, p99 %v", len(workLat), len(pairs),
		workQuantile(0.5).Round(time.Millisecond), workQuantile(0.99).Round(time.Millisecond))
	var lastWrite time.Time
	for _, at := range pairs {
		if at.After(lastWrite) {
			lastWrite = at
		}
	}
	// How long the harness took to make the burst: changes late in it wait
	// less for those early in it.
	b.ReportMetric(lastWrite.Sub(burst).Seconds(), "burst-s")
	b.ReportMetric(workLat[0].Seconds(), "work-min-s")
	b.ReportMetric(workQuantile(0.5).Seconds(), "work-p50-s")
	b.ReportMetric(workQuantile(0.99).Seconds(), "work-p99-s")
	b.ReportMetric(quantile(0.5).Seconds(), "status-p50-s")
	b.ReportMetric(quantile(0.99).Seconds(), "status-p99-s")
	b.ReportMetric(lat[len(lat)-1].Seconds(), "status-max-s")
	b.ReportMetric(delta["works/status:PATCH"]/changes, "work-writes-per-change")
	b.ReportMetric(writes/changes, "host-writes-per-change")
	b.ReportMetric(idleWrites, "idle-writes")
	b.ReportMetric(gets/changes, "member-gets-per-change")
	b.ReportMetric(0, "ns/op")
}

// memberReads counts the GETs the members' apiservers served: of single
// Deployments (the read-back of a Work), and of anything else (lists,
// discovery), over every member.
type memberReads struct{ gets, other float64 }

// readMemberReads scrapes every member's apiserver_request_total.
func readMemberReads(ctx context.Context, members []*testenv.Cluster) (memberReads, error) {
	var r memberReads
	for _, m := range members {
		families, err := scrapeMetrics(ctx, m.RESTConfig(), m.RESTConfig().Host+"/metrics")
		if err != nil {
			return r, fmt.Errorf("read metrics of member %s: %w", m.Name, err)
		}
		for _, s := range families["apiserver_request_total"].GetMetric() {
			l := labels(s)
			switch {
			case l["verb"] == "GET" && l["resource"] == "deployments" && l["subresource"] == "":
				r.gets += s.GetCounter().GetValue()
			case l["verb"] == "GET" || l["verb"] == "LIST":
				r.other += s.GetCounter().GetValue()
			}
		}
	}
	return r, nil
}

// statusName is the name of template i.
func statusName(i int) string { return fmt.Sprintf("web-%05d", i) }

// createStatusFleet registers the members, creates the templates'
// namespace, a policy duplicating every Deployment there to every member,
// and the Deployments.
func createStatusFleet(ctx context.Context, hub client.Client, members []*testenv.Cluster, nTemplates int) error {
	names, err := registerBenchMembers(ctx, hub, members)
	if err != nil {
		return err
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: statusNamespace}}); err != nil {
		return fmt.Errorf("create namespace %s: %w", statusNamespace, err)
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: statusNamespace, Name: "all"}}
	spec := fmt.Sprintf(`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  clusterAffinity: {clusterNames: [%s]}
  replicaScheduling: {replicaSchedulingType: Duplicated}
`, strings.Join(names, ", "))
	if err := yaml.UnmarshalStrict([]byte(spec), &pp.Spec); err != nil {
		return fmt.Errorf("decode policy %s/all: %w", statusNamespace, err)
	}
	if err := hub.Create(ctx, pp); err != nil {
		return fmt.Errorf("create policy %s/all: %w", statusNamespace, err)
	}
	return benchParallel(ctx, nTemplates, 32, func(ctx context.Context, i int) error {
		labels := map[string]string{"app": statusName(i)}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: statusNamespace, Name: statusName(i)},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
				},
			},
		}
		if err := hub.Create(ctx, d); err != nil {
			return fmt.Errorf("create deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		return nil
	})
}

// templateReady records when each host template first reported want ready
// replicas. It is safe for concurrent use.
type templateReady struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// watchTemplateReady starts an informer on the host's Deployments of
// statusNamespace that records when each first reports want ready
// replicas; it stops with ctx.
func watchTemplateReady(ctx context.Context, cfg *rest.Config, want int32) (*templateReady, error) {
	r := &templateReady{seen: map[string]time.Time{}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client of the host: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(statusNamespace))
	inf := factory.Apps().V1().Deployments().Informer()
	record := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok || d.Status.ReadyReplicas < want {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.seen[d.Name]; !ok {
			r.seen[d.Name] = time.Now()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }}); err != nil {
		return nil, fmt.Errorf("watch host deployments: %w", err)
	}
	factory.Start(ctx.Done())
	return r, nil
}

// watchWorkReady starts an informer on the host's Works that records when
// each first reports a manifest status of one ready replica, by
// "namespace/name"; it stops with ctx.
func watchWorkReady(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) (*templateReady, error) {
	r := &templateReady{seen: map[string]time.Time{}}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client of the host: %w", err)
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			var l workv1.WorkList
			err := c.List(ctx, &l, &client.ListOptions{Raw: &o})
			return &l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &workv1.WorkList{}, &client.ListOptions{Raw: &o})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &workv1.Work{}, 0, toolscache.Indexers{})
	record := func(obj any) {
		w, ok := obj.(*workv1.Work)
		if !ok || len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Status == nil ||
			!strings.Contains(string(w.Status.ManifestStatuses[0].Status.Raw), `"readyReplicas":1`) {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if key := w.Namespace + "/" + w.Name; r.seen[key].IsZero() {
			r.seen[key] = time.Now()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }}); err != nil {
		return nil, fmt.Errorf("watch host works: %w", err)
	}
	go inf.RunWithContext(ctx)
	return r, nil
}

func (r *templateReady) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *templateReady) at(name string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.seen[name]
	return t, ok
}

// benchGoroutines writes the control plane's goroutines (pprof's debug=1
// text: stacks with their counts) after d to path.
func benchGoroutines(ctx context.Context, b *testing.B, addr, path string, d time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(d):
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		b.Logf("goroutines: %v", err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Logf("goroutines: %v", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, body, 0o600)
	}
	if err != nil {
		b.Logf("goroutines: %v", err)
		return
	}
	b.Logf("goroutines %v into the burst written to %s", d, path)
}
