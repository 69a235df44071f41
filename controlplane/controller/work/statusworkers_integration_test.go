package work_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestStatusWorkersReadOneMemberAtOnce: a burst of Works that must be read
// back from one member is read by as many work status workers at once as
// the per-member share of --work-status-workers allows (16 of the default
// 32), not by the execution's four, and by no more: the member is behind a
// proxy that holds every read of a single Deployment once the burst
// starts, so the reads pile up there and the proxy counts them. A member
// status change is read from the watch's copy, without a read; the burst
// is of Works whose manifest status was written on the host by someone
// else, which only the member can vouch for, found by the status backstop.
func TestStatusWorkersReadOneMemberAtOnce(t *testing.T) {
	t.Parallel()
	const templates = 20
	opts := controllertest.Options("test")
	// Only the status backstop brings a Work back; a held read keeps its
	// worker for the whole test.
	opts.Resync, opts.StatusResync, opts.WorkRequestTimeout = 10*time.Minute, time.Second, time.Minute
	perMember := int64(opts.StatusMemberWorkers())
	if perMember >= templates {
		t.Fatalf("the burst (%d Works) must exceed the per-member limit (%d) to show it", templates, perMember)
	}

	env := startStallEnv(t)
	var holding atomic.Bool
	proxy := env.behind.StallProxy(t, func(r *http.Request) bool {
		// A read-back is a GET of one Deployment; the watch's list and
		// watch name no object.
		return holding.Load() && r.Method == http.MethodGet && r.URL.Query().Get("watch") == "" &&
			strings.Contains(r.URL.Path, "/namespaces/default/deployments/")
	})
	env.register(t, "member", proxy.URL, env.behind.Token, proxy.CAData)
	env.run(t, opts)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  placement:
    clusterAffinity:
      clusterNames: [member]
`)
	testkit.MustCreate(t, env.hub, pp)
	for i := range templates {
		testkit.MustCreate(t, env.hub, controllertest.NamedDeployment(fmt.Sprintf("web-%d", i)))
	}
	testkit.Eventually(t, controllertest.Deadline, "every Work applied and observed", func() (bool, string) {
		var works workv1.WorkList
		if err := env.hub.List(t.Context(), &works, client.InNamespace(shared.ExecutionNamespace("member"))); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, w := range works.Items {
			if apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable) {
				n++
			}
		}
		return n == templates, fmt.Sprintf("%d of %d", n, templates)
	})

	holding.Store(true)
	for i := range templates {
		key := client.ObjectKey{Namespace: shared.ExecutionNamespace("member"),
			Name: shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: fmt.Sprintf("web-%d", i)})}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var w workv1.Work
			if err := env.hub.Get(t.Context(), key, &w); err != nil {
				return err
			}
			w.Status.ManifestStatuses[0].Status = &runtime.RawExtension{Raw: []byte(`{"readyReplicas":7,"replicas":7}`)}
			return env.hub.Status().Update(t.Context(), &w)
		}); err != nil {
			t.Fatalf("write a manifest status into work %s: %v", key, err)
		}
	}
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%d read-backs held at once", perMember), func() (bool, string) {
		return proxy.Held() >= perMember, fmt.Sprintf("%d held (peak %d)", proxy.Held(), proxy.Peak())
	})
	// The others wait for a slot: none gets through while these are held.
	time.Sleep(2 * time.Second)
	if peak := proxy.Peak(); peak > perMember {
		t.Errorf("the member held %d read-backs at once, want at most its share of the work status workers, %d", peak, perMember)
	}
	t.Logf("%d of %d read-backs held at once (limit %d)", proxy.Peak(), templates, perMember)
}
