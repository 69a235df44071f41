package mcs_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestImportWorkWritesDoNotConflict changes a provider's endpoints 12
// times, one after the other, while a second writer patches the status of
// the two consumers' import Works every few milliseconds, as the execution
// and work status controllers do after each apply (only more often). The
// mcs controller's Work writes must never be refused with 409 Conflict,
// and each change costs exactly one Work write per consumer: the host
// apiserver counts no 409 and 24 writes on works (not the status
// subresource) over the burst, and both consumers get every change.
// Before, the controller updated the whole Work read from its cache, which
// a status patch, or its own write of the other consumer's Work, had made
// stale (409, then a retry).
func TestImportWorkWritesDoNotConflict(t *testing.T) {
	f := controllertest.StartFleet(t, 3)
	hub, provider, consumers := f.Hub, f.Names[0], f.Names[1:]
	ctx := t.Context()
	for _, c := range []client.Client{hub, f.Members[provider], f.Members[consumers[0]], f.Members[consumers[1]]} {
		installCRDs(t, c)
		testkit.MustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	}
	pm := f.Members[provider]
	testkit.MustCreate(t, pm, service("shop", "web"))
	testkit.MustCreate(t, pm, slice("shop", "web-a", "web", "10.0.0.1"))
	createMCS(t, hub, "shop", multicluster.KindServiceExport, nil)
	createPolicy(t, hub, "shop", "export", multicluster.KindServiceExport, provider)
	createMCS(t, hub, "shop", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "shop", "import", multicluster.KindServiceImport, consumers...)
	f.StartControlPlane(t, func(o *shared.Options) { o.Resync = shared.DefaultResync })
	for _, c := range consumers {
		waitAddresses(t, f.Members[c], "shop", "10.0.0.1")
	}
	time.Sleep(2 * time.Second) // the first import's trailing writes

	writesBefore, conflictsBefore := workWrites(t, f.Host.RESTConfig())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	statusWrites := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			for _, c := range consumers {
				statusWrites += patchImportWorkStatus(ctx, hub, c)
			}
		}
	})
	want := []string{"10.0.0.1"}
	for k := range 12 {
		added := fmt.Sprintf("10.0.1.%d", k+1)
		want = append(want, added)
		s := &discoveryv1.EndpointSlice{}
		testkit.MustUpdate(t, pm, client.ObjectKey{Namespace: "shop", Name: "web-a"}, s, func() {
			s.Endpoints = append(s.Endpoints, endpoint(added))
		})
		for _, c := range consumers {
			waitAddressesEvery(t, f.Members[c], "shop", 20*time.Millisecond, want...)
		}
	}
	time.Sleep(2 * time.Second) // a trailing write would come now
	close(stop)
	wg.Wait()
	writes, conflicts := workWrites(t, f.Host.RESTConfig())
	writes, conflicts = writes-writesBefore, conflicts-conflictsBefore
	t.Logf("%d status patches of the import Works over the burst; Work writes %v, refused with 409 %v", statusWrites, writes, conflicts)
	if statusWrites < 12 {
		t.Fatalf("only %d status patches over the burst: the race was not run", statusWrites)
	}
	if conflicts != 0 {
		t.Errorf("the host refused %v writes of works (not their status) with 409 Conflict over 12 endpoint changes; want none", conflicts)
	}
	if writes != 24 {
		t.Errorf("%v writes of works over 12 endpoint changes into 2 consumers; want 24, one per change per consumer", writes)
	}
}

// patchImportWorkStatus sets a condition of its own on the status of each
// import Work of the consumer, as a second status writer: the execution's
// and the work status controller's conditions are kept. It returns the
// number of patches the host accepted.
func patchImportWorkStatus(ctx context.Context, hub client.Client, consumer string) int {
	var list workv1.WorkList
	if err := hub.List(ctx, &list, client.InNamespace(shared.ExecutionNamespace(consumer)), client.HasLabels{shared.LabelMCSImportName}); err != nil {
		return 0
	}
	n := 0
	for i := range list.Items {
		w := &list.Items[i]
		orig := w.DeepCopy()
		apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "TestStatusWriter", Status: metav1.ConditionTrue,
			Reason: "Written", Message: time.Now().Format(time.RFC3339Nano)})
		if hub.Status().Patch(ctx, w, client.MergeFrom(orig)) == nil {
			n++
		}
	}
	return n
}

// workWrites is the host apiserver's count of writes of works (PUT, PATCH
// or server-side apply, the status subresource left out) it served, and of
// those it refused with 409 Conflict.
func workWrites(t *testing.T, cfg *rest.Config) (served, conflicts float64) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("host /metrics: %v", err)
	}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["resource"] != "works" || l["subresource"] != "" || (l["verb"] != "PUT" && l["verb"] != "PATCH" && l["verb"] != "APPLY") {
			continue
		}
		switch {
		case l["code"] == "409":
			conflicts += m.GetCounter().GetValue()
		case strings.HasPrefix(l["code"], "2"):
			served += m.GetCounter().GetValue()
		}
	}
	return served, conflicts
}
