package work_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// stallEnv is a host and two member apiservers, none registered yet.
type stallEnv struct {
	host, healthy, behind *testenv.Cluster
	hub                   client.Client
	healthyClient         client.Client
}

func startStallEnv(t *testing.T) stallEnv {
	t.Helper()
	fleet := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	env := stallEnv{host: fleet.Clusters[0], healthy: fleet.Clusters[1], behind: fleet.Clusters[2]}
	env.hub = controllertest.SystemHost(t, env.host)
	env.healthyClient = controllertest.Client(t, env.healthy.RESTConfig(), controllertest.Scheme(t))
	return env
}

// register makes a Cluster reaching host with the token and CA given.
func (e stallEnv) register(t *testing.T, name, host, token string, ca []byte) {
	t.Helper()
	controllertest.Register(t, e.hub, name, host, shared.SystemNamespace, map[string][]byte{clusterv1.SecretKeyToken: []byte(token), clusterv1.SecretKeyCA: ca})
}

// run starts a control plane with opts until the returned stop is called
// (or the test ends).
func (e stallEnv) run(t *testing.T, opts shared.Options) (stop func()) {
	t.Helper()
	return controllertest.StartManager(t, e.host.RESTConfig(), ctrl.Options{Client: shared.ClientOptions(), Scheme: controllertest.Scheme(t)}, controllertest.SetupControlPlane(opts))
}

// readyReason is the Ready condition of a Cluster as "Status/Reason".
func (e stallEnv) readyReason(t *testing.T, name string) string {
	var cl clusterv1.Cluster
	if err := e.hub.Get(t.Context(), client.ObjectKey{Name: name}, &cl); err != nil {
		return err.Error()
	}
	c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady)
	if c == nil {
		return "no Ready condition"
	}
	return string(c.Status) + "/" + c.Reason
}

func discovery(r *http.Request) bool { return r.URL.Path == "/api" || r.URL.Path == "/apis" }

// TestStalledDiscoveryStopsNoStatus: a member whose /readyz answers but
// whose discovery (/api, /apis) never does is reported NotReady within the
// probe timeout, and while probes of it hang, other members' status keeps
// being written.
func TestStalledDiscoveryStopsNoStatus(t *testing.T) {
	t.Parallel()
	env := startStallEnv(t)
	proxy := env.behind.StallProxy(t, discovery)
	env.register(t, "stalled", proxy.URL, env.behind.Token, proxy.CAData)

	t.Log("NotReady within the probe timeout")
	stop := env.run(t, shared.Options{
		Fleet: "test", ProbeInterval: 300 * time.Millisecond, ProbeTimeout: 2 * time.Second,
		FailureThreshold: time.Second, SuccessThreshold: time.Second, NoExecuteAfter: time.Minute, Resync: time.Second,
	})
	begin := time.Now()
	testkit.Eventually(t, controllertest.Deadline, "the stalled member is NotReady", func() (bool, string) {
		got := env.readyReason(t, "stalled")
		return got == "False/ClusterNotReachable", got
	})
	t.Logf("stalled member NotReady %v after the control plane started (probe timeout 2s)", time.Since(begin).Round(10*time.Millisecond))
	if proxy.Seen() == 0 {
		t.Fatal("the proxy held no discovery request; the test proves nothing")
	}
	stop()

	t.Log("other members are probed while probes of the stalled one hang (probe and request timeouts 10m)")
	env.run(t, shared.Options{
		Fleet: "test", ProbeInterval: 300 * time.Millisecond, ProbeTimeout: 10 * time.Minute, MemberRequestTimeout: 10 * time.Minute,
		FailureThreshold: time.Second, SuccessThreshold: time.Second, NoExecuteAfter: time.Minute, Resync: time.Second,
		ClusterStatusWorkers: 2,
	})
	held := proxy.Seen()
	testkit.Eventually(t, controllertest.Deadline, "a probe of the stalled member hangs", func() (bool, string) {
		return proxy.Seen() > held && proxy.Held() > 0, fmt.Sprintf("%d held", proxy.Held())
	})
	env.register(t, "healthy", env.healthy.Host, env.healthy.Token, env.healthy.CAData)
	testkit.Eventually(t, controllertest.Deadline, "the member registered meanwhile is Ready", func() (bool, string) {
		got := env.readyReason(t, "healthy")
		return got == "True/ClusterReady", got
	})
	if proxy.Held() == 0 {
		t.Errorf("the stalled member's probe ended; the test proves nothing about concurrency")
	}
}

// startStalledObjects registers two Ready members, healthy and stalled, the
// second behind a proxy that holds every request for objects of namespace
// default, runs a control plane with opts (probe, threshold and resync
// timings set here) and creates a policy placing every ConfigMap of default
// on both.
func startStalledObjects(t *testing.T, opts shared.Options) (stallEnv, *testenv.StallProxy) {
	t.Helper()
	env := startStallEnv(t)
	// Only the templates' namespace is held: the membership marker in
	// flotilla-system, which every probe claims, must get through, or the
	// member would not be Ready in the first place.
	proxy := env.behind.StallProxy(t, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/namespaces/default/") })
	env.register(t, "healthy", env.healthy.Host, env.healthy.Token, env.healthy.CAData)
	env.register(t, "stalled", proxy.URL, env.behind.Token, proxy.CAData)
	opts.Fleet, opts.ProbeInterval, opts.Resync = "test", 300*time.Millisecond, time.Second
	opts.FailureThreshold, opts.SuccessThreshold, opts.NoExecuteAfter = time.Second, time.Second, time.Minute
	env.run(t, opts)
	testkit.Eventually(t, controllertest.Deadline, "both members Ready", func() (bool, string) {
		a, b := env.readyReason(t, "healthy"), env.readyReason(t, "stalled")
		return a == "True/ClusterReady" && b == "True/ClusterReady", a + " " + b
	})
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
  placement:
    clusterAffinity:
      clusterNames: [healthy, stalled]
`)
	testkit.MustCreate(t, env.hub, pp)
	return env, proxy
}

// TestStalledMemberKeepsRolloutsGoing: a member that answers its probes
// but holds every request for objects (apply and read) may take only
// --member-workers of the execution workers, each for --work-timeout, and
// its Works fail naming the timeout, while Works for a healthy member keep
// being applied.
func TestStalledMemberKeepsRolloutsGoing(t *testing.T) {
	t.Parallel()
	const (
		workers, perMember = 6, 2
		templates          = 8
		workTimeout        = 5 * time.Second
	)
	env, proxy := startStalledObjects(t, shared.Options{WorkWorkers: workers, MemberWorkers: perMember, WorkTimeout: workTimeout})
	for i := range templates {
		testkit.MustCreate(t, env.hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}})
	}

	begin := time.Now()
	testkit.Eventually(t, controllertest.Deadline, "every ConfigMap on the healthy member", func() (bool, string) {
		var list corev1.ConfigMapList
		if err := env.healthyClient.List(t.Context(), &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "cm-") {
				n++
			}
		}
		return n == templates, fmt.Sprintf("%d of %d", n, templates)
	})
	t.Logf("%d ConfigMaps applied to the healthy member %v after creation, the stalled member holding %d requests",
		templates, time.Since(begin).Round(10*time.Millisecond), proxy.Held())

	testkit.Eventually(t, controllertest.Deadline, "a Work of the stalled member fails naming the work timeout", func() (bool, string) {
		var works workv1.WorkList
		if err := env.hub.List(t.Context(), &works, client.InNamespace(shared.ExecutionNamespace("stalled"))); err != nil {
			return false, err.Error()
		}
		for _, w := range works.Items {
			c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
			if c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "cluster stalled did not finish within the work timeout 5s") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d Works, none failed with the timeout yet", len(works.Items))
	})
	if proxy.Seen() == 0 {
		t.Fatal("the proxy held no request; the test proves nothing")
	}
	// One more than the limit is allowed: a worker that timed out frees its
	// slot as it cancels its request, and the proxy may see the next
	// worker's request a moment before it sees the cancellation. Without
	// the limit the stalled member's 8 Works would hold all 6 workers.
	if peak := proxy.Peak(); peak > perMember+1 {
		t.Errorf("the stalled member held %d requests at once, want at most --member-workers=%d (+1 in flight) of the %d workers", peak, perMember, workers)
	}
	t.Logf("the stalled member held at most %d requests at once (%d in all)", proxy.Peak(), proxy.Seen())
}
