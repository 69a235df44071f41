//go:build linux

package e2e_test

// The multi-cluster services benchmark (issue 33): many exported Services
// over apiserver-only members whose EndpointSlices the harness writes, as
// kube-controller-manager would; host writes are counted as in the
// restart benchmarks (bench_writes_test.go).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const (
	envMCSServices = "FLOTILLA_BENCH_MCS_SERVICES" // exported Services; default 200
	envMCSClusters = "FLOTILLA_BENCH_MCS_CLUSTERS" // members, the first half exporting, the rest importing; default 10
	envMCSChanges  = "FLOTILLA_BENCH_MCS_CHANGES"  // endpoint changes measured one at a time; default 10
	envMCSTimeout  = "FLOTILLA_BENCH_MCS_TIMEOUT"  // bound of each wait; default 20m
	mcsNamespace   = "bench"
)

// BenchmarkMCSSync: S Services, each run by the first half of C
// apiserver-only members (one EndpointSlice of one address each, written
// by the harness) and exported from them by a ServiceExport, imported by
// a ServiceImport into the other half; the control plane runs in this
// process with the default resync. Reported:
//   - sync-s: from creating the exports, imports and their two policies
//     (the control plane running, every member Ready) until every consumer holds every Service's slices with every
//     provider's address;
//   - setup-s: the harness writing the members' Services and slices;
//   - per endpoint change (one provider's slice of one Service gains an
//     address, one change at a time, 2 s let after each for trailing
//     writes): the latency until every consumer has it, and the host's
//     writes: Work writes per consumer (goal: 1), the host copy of the
//     collected slice, Work status patches per consumer (the execution
//     reporting the applied slices), all writes but Leases and Events;
//   - unchanged-writes: host writes after the same number of slice updates
//     that change nothing an export reads (an annotation; goal: 0), beside
//     idle-writes over a window as long with no update at all;
//   - work-conflicts: writes of Works (not their status) the host refused
//     with 409 over the endpoint changes (goal: 0).
func BenchmarkMCSSync(b *testing.B) {
	services := testkit.EnvInt(b, envMCSServices, 200)
	clusters := testkit.EnvInt(b, envMCSClusters, 10)
	changes := min(testkit.EnvInt(b, envMCSChanges, 10), services)
	timeout := testkit.EnvDuration(b, envMCSTimeout, 20*time.Minute)
	if clusters < 2 || services < 1 {
		b.Fatalf("%s must be at least 2 and %s at least 1", envMCSClusters, envMCSServices)
	}
	ctx := b.Context()
	// Eleven apiservers on a loaded 2-core machine take longer than the
	// environment's default two minutes to answer /readyz.
	f := controllertest.StartFleetWith(b, testenv.Options{Clusters: 1 + clusters, Timeout: timeout})
	providers, consumers := f.Names[:clusters/2], f.Names[clusters/2:]
	b.Logf("%d Services exported from %v into %v", services, providers, consumers)

	setupStart := time.Now()
	for _, c := range append([]client.Client{f.Hub}, memberClients(f)...) {
		installMCSCRDs(b, c)
		testkit.MustCreate(b, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mcsNamespace}})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for pi, p := range providers {
		m := f.Members[p]
		for i := range services {
			g.Go(func() error {
				if err := m.Create(gctx, mcsService(i)); err != nil {
					return err
				}
				return m.Create(gctx, mcsSlice(i, mcsAddress(pi, i)))
			})
		}
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(setupStart).Seconds(), "setup-s")

	// The host client's limits are the controlplane command's defaults
	// (--kube-api-qps=400, --kube-api-burst=600), not the test
	// environment's 50/100: at 200 Services x 10 members the sync writes
	// some 20,000 objects, which 50 a second alone would stretch past six
	// minutes.
	// Default probe and thresholds too: the test fleet's 1 s failure
	// threshold turned a member NotReady under load in a 3-member run, and
	// its eviction cost one endpoint change 67 s.
	opts := shared.Options{Fleet: "test"}
	hostCfg := f.Host.RESTConfig()
	hostCfg.QPS, hostCfg.Burst = 400, 600
	controllertest.StartManager(b, hostCfg, ctrl.Options{Client: shared.ClientOptions(), Scheme: f.Scheme}, controllertest.SetupControlPlane(opts))
	// The sync is timed from a running control plane whose members are
	// Ready, so it does not include the start.
	testkit.EventuallyEvery(b, 200*time.Millisecond, timeout, "every member Ready", func() (bool, string) {
		var list clusterv1.ClusterList
		if err := f.Hub.List(ctx, &list); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, c := range list.Items {
			if apimeta.IsStatusConditionTrue(c.Status.Conditions, api.ClusterConditionReady) {
				ready++
			}
		}
		return ready == clusters, fmt.Sprintf("%d of %d Ready", ready, clusters)
	})
	b.ResetTimer()
	allHost := func() hostWrites {
		w, err := readHostRequests(ctx, f.Host.RESTConfig(), func(string) bool { return true })
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	probe := startSyncProbe(b, allHost)
	start := time.Now()
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(16)
	g.Go(func() error {
		return f.Hub.Create(gctx, mcsPolicy("export", multicluster.KindServiceExport, providers))
	})
	g.Go(func() error {
		return f.Hub.Create(gctx, mcsPolicy("import", multicluster.KindServiceImport, consumers))
	})
	for i := range services {
		g.Go(func() error { return f.Hub.Create(gctx, mcsTemplate(i, multicluster.KindServiceExport)) })
		g.Go(func() error { return f.Hub.Create(gctx, mcsTemplate(i, multicluster.KindServiceImport)) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	want := map[string][]string{} // derived Service → every provider's address
	for i := range services {
		for pi := range providers {
			want[mcsDerived(i)] = append(want[mcsDerived(i)], mcsAddress(pi, i))
		}
	}
	testkit.EventuallyEvery(b, time.Second, timeout, "every consumer has every Service's slices", func() (bool, string) {
		for _, c := range consumers {
			if missing := mcsMissing(ctx, f.Members[c], nil, want); missing != "" {
				return false, c + ": " + missing
			}
		}
		return true, ""
	})
	sync := time.Since(start)
	b.StopTimer()
	probe.end(allHost, "full sync")
	b.ReportMetric(sync.Seconds(), "sync-s")
	b.Logf("full sync of %d Services x %d consumers in %s", services, len(consumers), sync.Round(10*time.Millisecond))

	// Let the first sync's trailing status writes pass before counting.
	time.Sleep(5 * time.Second)
	const settle = 2 * time.Second
	var lat []time.Duration
	total := hostWrites{}
	for k := range changes {
		pi := k % len(providers)
		m := f.Members[providers[pi]]
		added := fmt.Sprintf("10.250.%d.%d", k/250, k%250+1)
		before := mustHostWrites(b, f)
		s := &discoveryv1.EndpointSlice{}
		t0 := time.Now()
		testkit.MustUpdate(b, m, client.ObjectKey{Namespace: mcsNamespace, Name: mcsName(k)}, s, func() {
			s.Endpoints = append(s.Endpoints, mcsEndpoint(added))
		})
		one := map[string][]string{mcsDerived(k): append(slices.Clone(want[mcsDerived(k)]), added)}
		testkit.EventuallyEvery(b, 50*time.Millisecond, timeout, "every consumer has "+added, func() (bool, string) {
			for _, c := range consumers {
				if missing := mcsMissing(ctx, f.Members[c], client.MatchingLabels{discoveryv1.LabelServiceName: mcsDerived(k)}, one); missing != "" {
					return false, c + ": " + missing
				}
			}
			return true, ""
		})
		lat = append(lat, time.Since(t0))
		time.Sleep(settle)
		// Benchmark output past ten lines is cut without -v: the breakdown
		// is in the metrics below, each change only in a verbose run.
		d := mustHostWrites(b, f).since(before)
		if testing.Verbose() {
			b.Logf("change %d (%s of %s): %s; host writes %s", k, mcsName(k), providers[pi], lat[k].Round(time.Millisecond), d)
		}
		for key, v := range d {
			total[key] += v
		}
	}
	writes, _, _ := total.split()
	workWrites := total["works:PUT"] + total["works:PATCH"] + total["works:APPLY"] + total["works:POST"]
	n := float64(changes)

	idleStart := mustHostWrites(b, f)
	time.Sleep(time.Duration(changes) * settle)
	idle, _, _ := mustHostWrites(b, f).since(idleStart).split()
	unchangedStart := mustHostWrites(b, f)
	for k := range changes {
		s := &discoveryv1.EndpointSlice{}
		testkit.MustUpdate(b, f.Members[providers[k%len(providers)]], client.ObjectKey{Namespace: mcsNamespace, Name: mcsName(k)}, s, func() {
			s.Annotations = map[string]string{"bench/touched": fmt.Sprint(k)}
		})
		time.Sleep(settle)
	}
	unchangedDelta := mustHostWrites(b, f).since(unchangedStart)
	unchanged, _, _ := unchangedDelta.split()
	b.Logf("host writes over %d changes: %s; over %d unchanged updates: %s; idle over as long: %.0f", changes, total, changes, unchangedDelta, idle)

	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2].Seconds(), "change-p50-s")
	b.ReportMetric(lat[(len(lat)*99+99)/100-1].Seconds(), "change-p99-s") // nearest rank: the max below 100 changes
	b.ReportMetric(lat[len(lat)-1].Seconds(), "change-max-s")
	b.ReportMetric(workWrites/n/float64(len(consumers)), "work-writes-per-change-per-consumer")
	b.ReportMetric(writes/n, "host-writes-per-change")
	b.ReportMetric((total["endpointslices:PUT"]+total["endpointslices:PATCH"]+total["endpointslices:APPLY"])/n, "collected-writes-per-change")
	b.ReportMetric(total["works/status:PATCH"]/n/float64(len(consumers)), "work-status-writes-per-change-per-consumer")
	conflicts := 0.0
	for key, v := range total {
		if strings.HasPrefix(key, "works:") && strings.HasSuffix(key, ":409") {
			conflicts += v
		}
	}
	b.ReportMetric(conflicts, "work-conflicts")
	b.ReportMetric(unchanged, "unchanged-writes")
	b.ReportMetric(idle, "idle-writes")
	b.ReportMetric(0, "ns/op")
}

func memberClients(f controllertest.Fleet) []client.Client {
	out := make([]client.Client, 0, len(f.Names))
	for _, n := range f.Names {
		out = append(out, f.Members[n])
	}
	return out
}

func mustHostWrites(b *testing.B, f controllertest.Fleet) hostWrites {
	b.Helper()
	w, err := readHostWrites(b.Context(), f.Host.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// mcsMissing says what of want (derived Service → addresses) the
// consumer's flotilla-managed slices (of sel) lack; "" when none.
func mcsMissing(ctx context.Context, c client.Client, sel client.MatchingLabels, want map[string][]string) string {
	labels := client.MatchingLabels{discoveryv1.LabelManagedBy: multicluster.ManagedBy}
	for k, v := range sel {
		labels[k] = v
	}
	var list discoveryv1.EndpointSliceList
	if err := c.List(ctx, &list, client.InNamespace(mcsNamespace), labels); err != nil {
		return err.Error()
	}
	have := map[string]map[string]bool{}
	for _, s := range list.Items {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if have[svc] == nil {
			have[svc] = map[string]bool{}
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				have[svc][a] = true
			}
		}
	}
	var missing []string
	for svc, addrs := range want {
		for _, a := range addrs {
			if !have[svc][a] {
				missing = append(missing, svc+"/"+a)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Sprintf("%d missing, first %s", len(missing), missing[0])
	}
	return ""
}

func installMCSCRDs(b *testing.B, c client.Client) {
	b.Helper()
	for _, doc := range multicluster.CRDs() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		testkit.MustYAML(b, crd, "%s", doc)
		testkit.MustCreate(b, c, crd)
	}
	testkit.Eventually(b, time.Minute, "MCS CRDs established", func() (bool, string) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(multicluster.Group + "/" + multicluster.Version)
		l.SetKind(multicluster.KindServiceExport + "List")
		err := c.List(b.Context(), l)
		return err == nil, fmt.Sprint(err)
	})
}

func mcsName(i int) string    { return fmt.Sprintf("svc-%03d", i) }
func mcsDerived(i int) string { return "derived-" + mcsName(i) }

// mcsAddress is provider pi's address of Service i.
func mcsAddress(pi, i int) string { return fmt.Sprintf("10.%d.%d.%d", pi+1, i/250, i%250+1) }

func mcsService(i int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: mcsNamespace, Name: mcsName(i)},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": mcsName(i)},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func mcsEndpoint(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
}

// mcsSlice is Service i's one slice in a provider, named as the Service.
func mcsSlice(i int, ip string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: mcsNamespace, Name: mcsName(i), Labels: map[string]string{discoveryv1.LabelServiceName: mcsName(i)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{mcsEndpoint(ip)},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

// mcsTemplate is Service i's ServiceExport or ServiceImport on the host.
func mcsTemplate(i int, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if kind == multicluster.KindServiceImport {
		u.Object["spec"] = map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}}}
	}
	u.SetAPIVersion(multicluster.Group + "/" + multicluster.Version)
	u.SetKind(kind)
	u.SetNamespace(mcsNamespace)
	u.SetName(mcsName(i))
	return u
}

// mcsPolicy propagates every object of kind in the namespace to clusters.
func mcsPolicy(name, kind string, clusters []string) *policyv1.PropagationPolicy {
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: mcsNamespace, Name: name}}
	pp.Spec.ResourceSelectors = []api.ResourceSelector{{APIVersion: multicluster.Group + "/" + multicluster.Version, Kind: kind}}
	pp.Spec.Placement.ClusterAffinity = &api.ClusterAffinity{ClusterNames: clusters}
	return pp
}
