package mcs_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const deadline = 30 * time.Second

// TestServiceExportAndImport exports a Service from two real members and
// imports it into a third. The members are apiserver-only, so the test
// writes the providers' EndpointSlices as their EndpointSlice controller
// would. The consumer's derived Service gets exactly the providers'
// endpoints, follows a provider's change, loses a provider's endpoints
// while it is NotReady and gets them back, never receives the forged
// slices (another Service, another namespace, a non-exporting cluster, a
// slice flotilla imported, a forged Work), a tenant's import in another
// namespace gets none of them, and deleting the export and the import
// removes what flotilla made and nothing else.
func TestServiceExportAndImport(t *testing.T) {
	f := controllertest.StartFleet(t, 3)
	hub, names := f.Hub, f.Names
	p0, p1, consumer := names[0], names[1], names[2]
	ctx := t.Context()
	for _, c := range append([]client.Client{hub}, f.Members[p0], f.Members[p1], f.Members[consumer]) {
		installCRDs(t, c)
	}
	for _, ns := range []string{"shop", "tenant-b"} {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// The providers run shop/web; p0 also runs other/web, which is not
	// exported; the consumer runs a web of its own, not exported from it.
	for _, n := range []string{p0, p1, consumer} {
		m := f.Members[n]
		testkit.MustCreate(t, m, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
		testkit.MustCreate(t, m, service("shop", "web"))
	}
	testkit.MustCreate(t, f.Members[p0], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	testkit.MustCreate(t, f.Members[p0], service("other", "web"))
	testkit.MustCreate(t, f.Members[p0], slice("other", "web-x", "web", "10.66.0.4"))
	testkit.MustCreate(t, f.Members[p0], slice("shop", "web-a", "web", "10.0.0.1"))
	real1 := slice("shop", "web-b", "web", "10.1.0.1", "10.1.0.2")
	real1.Labels[multicluster.LabelSourceCluster] = p0 // claims another cluster
	testkit.MustCreate(t, f.Members[p1], real1)
	testkit.MustCreate(t, f.Members[p1], slice("shop", "other-a", "other", "10.66.0.1"))
	imported := slice("shop", "web-imp", "web", "10.66.0.2")
	imported.Labels[discoveryv1.LabelManagedBy] = multicluster.ManagedBy
	testkit.MustCreate(t, f.Members[p1], imported)
	testkit.MustCreate(t, f.Members[consumer], slice("shop", "web-local", "web", "10.66.0.3"))
	// A user's own slice of the derived Service's name in the consumer,
	// which flotilla must leave alone.
	testkit.MustCreate(t, f.Members[consumer], slice("shop", "users", "derived-web", "10.77.0.1"))

	createMCS(t, hub, "shop", multicluster.KindServiceExport, nil)
	createPolicy(t, hub, "shop", "export", multicluster.KindServiceExport, p0, p1)
	createMCS(t, hub, "shop", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "shop", "import", multicluster.KindServiceImport, consumer)
	createMCS(t, hub, "tenant-b", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "tenant-b", "import", multicluster.KindServiceImport, consumer)

	start := time.Now()
	// The default resync: endpoints follow the members' watches, not a
	// poll.
	defaultResync := func(o *shared.Options) { o.Resync = shared.DefaultResync }
	stop := f.StartControlPlane(t, defaultResync)
	t.Cleanup(func() { dumpOnFailure(t, hub) })
	cm := f.Members[consumer]
	waitAddresses(t, cm, "shop", "10.0.0.1", "10.1.0.1", "10.1.0.2")
	t.Logf("first import in %s", time.Since(start).Round(time.Millisecond))
	waitImportClusters(t, hub, "shop", p0, p1)

	var svc corev1.Service
	if err := cm.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "derived-web"}, &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].Name != "http" {
		t.Errorf("derived Service: selector %v, ports %+v; want no selector and the import's port http/80", svc.Spec.Selector, svc.Spec.Ports)
	}
	// The host's copies live in the providers' execution namespaces,
	// labelled with the cluster they were read from, whatever the slice said.
	for _, tc := range []struct{ cluster, name string }{{p0, "shop.web-a"}, {p1, "shop.web-b"}} {
		got, err := shared.CollectedSlices(ctx, hub, "shop", "web")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(got, func(s discoveryv1.EndpointSlice) bool {
			return s.Namespace == shared.ExecutionNamespace(tc.cluster) && strings.HasPrefix(s.Name, tc.name+"-") && s.Labels[multicluster.LabelSourceCluster] == tc.cluster
		}) {
			t.Errorf("no collected slice %s of cluster %s on the host: %v", tc.name, tc.cluster, sliceNames(got))
		}
	}
	// A settled export does not churn: neither the host's copies nor the
	// consumers' Works change while what the members' slices say does not,
	// even when a slice changes in what an export does not read (its
	// event wakes the export). (An identical update would not show here,
	// as the apiserver stores no no-op update; SameCollected and MergeWork
	// keep those from being sent.)
	versions := settledVersions(t, hub)
	web0 := &discoveryv1.EndpointSlice{}
	testkit.MustUpdate(t, f.Members[p0], client.ObjectKey{Namespace: "shop", Name: "web-a"}, web0, func() {
		web0.Annotations = map[string]string{"touched": "yes"}
	})
	time.Sleep(3 * time.Second)
	if d := cmp.Diff(versions, settledVersions(t, hub)); d != "" {
		t.Errorf("an unchanged export changed objects (-before +after):\n%s", d)
	}
	// The export says which clusters export it: its Valid condition, an
	// event, and the exported endpoints' gauge (the forged slices not
	// counted).
	waitConditions(t, hub, map[string]string{
		"Valid":    "True Exported exported from " + p0 + ", " + p1,
		"Conflict": "False NoConflict the exporting clusters' Services agree on their ports and type",
	})
	testkit.Eventually(t, deadline, "a ServiceExported event on the ServiceExport", func() (bool, string) {
		var list eventsv1.EventList
		if err := hub.List(ctx, &list, client.InNamespace("shop")); err != nil {
			return false, err.Error()
		}
		for _, e := range list.Items {
			if e.Reason == "ServiceExported" && e.Regarding.Kind == multicluster.KindServiceExport {
				return true, ""
			}
		}
		return false, fmt.Sprint(len(list.Items), " events")
	})
	waitGauge(t, "flotilla_mcs_exported_endpoints{shop/web}", metrics.MCSExportedEndpoints.WithLabelValues("shop", "web"), 3)
	// A provider's Service that defines its ports otherwise is a conflict
	// naming both clusters; the endpoints are still exported. (Its
	// EndpointSlice controller would rewrite the slice's ports, which
	// wakes the export; the test does it.)
	svc1 := &corev1.Service{}
	testkit.MustUpdate(t, f.Members[p1], client.ObjectKey{Namespace: "shop", Name: "web"}, svc1, func() { svc1.Spec.Ports[0].Port = 8080 })
	testkit.MustUpdate(t, f.Members[p1], client.ObjectKey{Namespace: "shop", Name: "web-b"}, real1, func() { real1.Ports[0].Port = ptr.To[int32](8081) })
	waitConditions(t, hub, map[string]string{
		"Valid": "True Exported exported from " + p0 + ", " + p1,
		"Conflict": "True PortConflict ports differ: [http:80/TCP] in " + p0 + "; [http:8080/TCP] in " + p1 +
			" (a consumer's derived Service takes its ports and type from its ServiceImport)",
	})

	// The tenant's import of the same name in another namespace gets its
	// derived Service and no endpoints.
	testkit.Eventually(t, deadline, "tenant-b/derived-web in the consumer", func() (bool, string) {
		err := cm.Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "derived-web"}, &corev1.Service{})
		return err == nil, fmt.Sprint(err)
	})
	if got := addresses(t, cm, "tenant-b"); len(got) > 0 {
		t.Errorf("tenant-b's import got endpoints of namespace shop: %v", got)
	}

	// An import whose derived Service name would be too long is refused
	// with an event that says why; nothing is imported for it.
	long := mcsObject("tenant-b", multicluster.KindServiceImport, importSpec())
	long.SetName(strings.Repeat("x", 56))
	testkit.MustCreate(t, hub, long)
	all := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "imports"}}
	testkit.MustYAML(t, all, "spec:\n  resourceSelectors:\n  - {apiVersion: %s/%s, kind: %s}\n  placement:\n    clusterAffinity: {clusterNames: [%s]}\n",
		multicluster.Group, multicluster.Version, multicluster.KindServiceImport, consumer)
	testkit.MustCreate(t, hub, all)
	testkit.Eventually(t, deadline, "a ServiceImportRefused event", func() (bool, string) {
		var list eventsv1.EventList
		if err := hub.List(ctx, &list, client.InNamespace("tenant-b")); err != nil {
			return false, err.Error()
		}
		var notes []string
		for _, e := range list.Items {
			if e.Reason == "ServiceImportRefused" && e.Regarding.Name == long.GetName() {
				notes = append(notes, e.Note)
				if strings.Contains(e.Note, "is not a valid Service name") && strings.Contains(e.Note, "ServiceImport tenant-b/"+long.GetName()) {
					return true, ""
				}
			}
		}
		return false, fmt.Sprint(notes)
	})
	// A Work forged in the consumer's execution namespace, shaped like the
	// import's, with an endpoint the import does not render, is never applied.
	forgeWork(t, hub, f.Members[consumer], consumer, p0)

	// A provider's endpoints change and the consumer follows, woken by the
	// member's watch: with the default resync no poll comes soon enough
	// for the goal, a median at most 2 s.
	want := []string{"10.0.0.1", "10.1.0.1", "10.1.0.2"}
	var took []time.Duration
	for i := 3; i <= 7; i++ {
		ip := fmt.Sprintf("10.1.0.%d", i)
		testkit.MustUpdate(t, f.Members[p1], client.ObjectKey{Namespace: "shop", Name: "web-b"}, real1, func() {
			real1.Endpoints = append(real1.Endpoints, endpoint(ip))
		})
		changed := time.Now()
		want = append(want, ip)
		waitAddressesEvery(t, cm, "shop", 10*time.Millisecond, want...)
		took = append(took, time.Since(changed).Round(time.Millisecond))
	}
	slices.Sort(took)
	t.Logf("endpoint changes reached the consumer in %v, median %s", took, took[len(took)/2])
	if took[len(took)/2] > 2*time.Second {
		t.Errorf("endpoint changes reached the consumer in %v: median over 2 s", took)
	}

	// A provider's slice is replaced under the same name by one of another
	// address type (EndpointSlice's addressType is immutable): the host's
	// copy and the consumer's slice are replaced, not left failing to
	// update.
	addressTypeChange(t, f, stop, p0, defaultResync)
	want[0] = "fd00::1"
	waitAddresses(t, cm, "shop", want...)
	waitAddressTypes(t, cm, "shop", map[string]discoveryv1.AddressType{"fd00::1": discoveryv1.AddressTypeIPv6, "10.1.0.1": discoveryv1.AddressTypeIPv4})

	// A provider that goes NotReady is withdrawn, and comes back. Before it
	// is found not ready, a collection (woken by the other provider's
	// slice) cannot read it: a sync error of that member, its endpoints
	// kept.
	syncErrors := metrics.MCSSyncErrors.WithLabelValues(p1)
	before := testutil.ToFloat64(syncErrors)
	f.Clusters[1].StopAPIServer()
	testkit.MustUpdate(t, f.Members[p0], client.ObjectKey{Namespace: "shop", Name: "web-a"}, web0, func() {
		web0.Annotations = map[string]string{"touched": "again"}
	})
	testkit.Eventually(t, deadline, "a sync error of "+p1, func() (bool, string) {
		got := testutil.ToFloat64(syncErrors)
		return got > before, fmt.Sprint(got)
	})
	waitAddresses(t, cm, "shop", "fd00::1")
	waitConditions(t, hub, map[string]string{
		"Valid":    "True Exported exported from " + p0 + "; cluster " + p1 + " is not ready, its endpoints are withdrawn",
		"Conflict": "False NoConflict the exporting clusters' Services agree on their ports and type",
	})
	if err := f.Clusters[1].StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, cm, "shop", want...)

	// Deleting the export empties the consumer and the host.
	if err := hub.Delete(ctx, mcsObject("shop", multicluster.KindServiceExport, nil)); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, cm, "shop")
	testkit.Eventually(t, deadline, "no collected slices on the host", func() (bool, string) {
		got, err := shared.CollectedSlices(ctx, hub, "shop", "web")
		return err == nil && len(got) == 0, fmt.Sprint(sliceNames(got), err)
	})
	// Deleting the import removes the derived Service, and only flotilla's.
	if err := hub.Delete(ctx, mcsObject("shop", multicluster.KindServiceImport, nil)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, deadline, "derived-web gone from the consumer", func() (bool, string) {
		err := cm.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "derived-web"}, &corev1.Service{})
		return shared.IsNotFound(err), fmt.Sprint(err)
	})
	for _, name := range []string{"users", "web-local"} {
		if err := cm.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, &discoveryv1.EndpointSlice{}); err != nil {
			t.Errorf("the consumer's own slice %s: %v", name, err)
		}
	}
}

// forgeWork writes a Work that claims to be the import's, carrying a
// slice of derived-web with an endpoint the import never renders, and
// checks that it is not applied: the execution controller verifies an
// import Work against what the import renders now.
func forgeWork(t *testing.T, hub, member client.Client, cluster, provider string) {
	t.Helper()
	ctx := t.Context()
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, shared.ImportBinding("shop", "web"), &rb); err != nil {
		t.Fatal(err)
	}
	forged := slice("shop", "derived-web-forged", "derived-web", "10.66.0.9")
	forged.Labels[discoveryv1.LabelManagedBy] = multicluster.ManagedBy
	forged.TypeMeta = metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"}
	obj := toUnstructured(t, forged)
	w, err := shared.NewMCSWork(&rb, cluster, obj)
	if err != nil {
		t.Fatal(err)
	}
	// The execution controller's check, asked directly of the real host
	// (the mcs controller deletes a forged Work soon after it appears, so
	// the end-to-end check below alone could pass by that race).
	opts := controllertest.Options("test")
	var genuine workv1.WorkList
	if err := hub.List(ctx, &genuine, client.InNamespace(shared.ExecutionNamespace(cluster)), client.MatchingLabels{shared.LabelMCSImportName: "web", shared.LabelMCSImportNamespace: "shop"}); err != nil || len(genuine.Items) == 0 {
		t.Fatalf("the import's Works: %d, %v", len(genuine.Items), err)
	}
	for _, g := range genuine.Items {
		if _, err := shared.VerifyWork(ctx, hub, &g, cluster, opts); err != nil {
			t.Errorf("the import's own Work %s is not verified: %v", g.Name, err)
		}
	}
	edited := genuine.Items[len(genuine.Items)-1].DeepCopy()
	objs, err := shared.Manifests(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(objs[0].Object, []any{map[string]any{"addresses": []any{"10.66.0.8"}}}, "endpoints"); err != nil {
		t.Fatal(err)
	}
	raw, err := objs[0].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	edited.Spec.Workload.Manifests[0].Raw = raw
	elsewhere := w.DeepCopy()
	elsewhere.Namespace = shared.ExecutionNamespace(provider)
	for what, tc := range map[string]struct {
		w       *workv1.Work
		cluster string
	}{
		"a slice the import does not render":                  {w, cluster},
		"the import's slice with an endpoint edited in":       {edited, cluster},
		"a Work in a cluster the import is not propagated to": {elsewhere, provider},
	} {
		if _, err := shared.VerifyWork(ctx, hub, tc.w, tc.cluster, opts); !errors.Is(err, shared.ErrPending) && !shared.IsRefused(err) {
			t.Errorf("%s: verified (%v); want it held or refused", what, err)
		}
	}
	testkit.MustCreate(t, hub, w)
	// The forged Work's verdict: not applied.
	testkit.Eventually(t, deadline, "the forged Work is held", func() (bool, string) {
		var got workv1.Work
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), &got); err != nil {
			return shared.IsNotFound(err), fmt.Sprint(err) // the controller deleted it
		}
		for _, c := range got.Status.Conditions {
			if c.Type == api.ConditionWorkApplied && c.Status == metav1.ConditionTrue {
				t.Fatalf("forged Work applied: %s", c.Message)
			}
		}
		return true, ""
	})
	// The mcs controller deletes a Work its import does not want.
	testkit.Eventually(t, deadline, "the forged Work deleted", func() (bool, string) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(w), &workv1.Work{})
		return shared.IsNotFound(err), fmt.Sprint(err)
	})
	if err := member.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "derived-web-forged"}, &discoveryv1.EndpointSlice{}); !shared.IsNotFound(err) {
		t.Errorf("forged slice in the consumer: %v", err)
	}
}
