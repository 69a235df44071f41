package work_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestStalledMemberRequestTimeout: with the default two-minute work
// timeout, a member that holds every request for objects fails each of its
// Works within --work-request-timeout, naming the cluster and the timeout,
// so it holds its workers for about that long; changes to every template
// reach a healthy member within a small bound meanwhile.
func TestStalledMemberRequestTimeout(t *testing.T) {
	t.Parallel()
	const (
		workers, perMember = 4, 2
		templates          = 8
		requestTimeout     = time.Second
		// healthyBound is what a round of changes may take to reach the
		// healthy member while the stalled one holds its workers: far
		// below the work timeout (2m), which a stalled member would hold
		// a worker for without the request timeout.
		healthyBound = 20 * time.Second
	)
	env, proxy := startStalledObjects(t, shared.Options{WorkWorkers: workers, MemberWorkers: perMember, WorkRequestTimeout: requestTimeout})
	begin := time.Now()
	for i := range templates {
		testkit.MustCreate(t, env.hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"v": "1"}})
	}
	env.waitHealthyAt(t, templates, "1")
	t.Logf("%d ConfigMaps on the healthy member %v after creation", templates, time.Since(begin).Round(10*time.Millisecond))

	want := fmt.Sprintf("cluster stalled: read the live object: no answer within the member request timeout %s", requestTimeout)
	testkit.Eventually(t, controllertest.Deadline, "a Work of the stalled member fails naming the cluster and the request timeout", func() (bool, string) {
		var works workv1.WorkList
		if err := env.hub.List(t.Context(), &works, client.InNamespace(shared.ExecutionNamespace("stalled"))); err != nil {
			return false, err.Error()
		}
		last := "none failed yet"
		for _, w := range works.Items {
			c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
			if c == nil || c.Status != metav1.ConditionFalse {
				continue
			}
			if c.Reason == api.ReasonWorkApplyFailed && strings.Contains(c.Message, want) {
				return true, ""
			}
			last = c.Reason + ": " + c.Message
		}
		return false, fmt.Sprintf("%d Works; %s", len(works.Items), last)
	})
	failedAfter := time.Since(begin)
	t.Logf("a Work of the stalled member failed %v after creation (request timeout %s, work timeout %s)",
		failedAfter.Round(10*time.Millisecond), requestTimeout, shared.DefaultWorkTimeout)
	if proxy.Seen() == 0 {
		t.Fatal("the proxy held no request; the test proves nothing")
	}

	t.Log("every template changed while the stalled member keeps failing")
	changed := time.Now()
	for i := range templates {
		cm := &corev1.ConfigMap{}
		testkit.MustUpdate(t, env.hub, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}, cm, func() {
			cm.Data["v"] = "2"
		})
	}
	env.waitHealthyAt(t, templates, "2")
	took := time.Since(changed)
	t.Logf("the change reached the healthy member after %v; the stalled member held %d requests at most, %d in all",
		took.Round(10*time.Millisecond), proxy.Peak(), proxy.Seen())
	if took > healthyBound {
		t.Errorf("the change took %v to reach the healthy member, want at most %v while a member stalls", took, healthyBound)
	}
	// One more than the limit is allowed: a worker that timed out frees its
	// slot as it cancels its request, and the proxy may see the next
	// request a moment before the cancellation.
	if peak := proxy.Peak(); peak > perMember+1 {
		t.Errorf("the stalled member held %d requests at once, want at most --member-workers=%d (+1 in flight)", peak, perMember)
	}
	// Each held request ends within the request timeout and frees its
	// worker: every one of the stalled member's Works gets its turn, and
	// comes back after the resync.
	testkit.Eventually(t, controllertest.Deadline, "the stalled member is sent more requests than it has Works", func() (bool, string) {
		return proxy.Seen() > templates, fmt.Sprintf("%d requests, peak %d", proxy.Seen(), proxy.Peak())
	})
}

// waitHealthyAt waits until the healthy member holds n ConfigMaps cm-* of
// namespace default, all with value v.
func (e stallEnv) waitHealthyAt(t *testing.T, n int, v string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%d ConfigMaps at v=%s on the healthy member", n, v), func() (bool, string) {
		var list corev1.ConfigMapList
		if err := e.healthyClient.List(t.Context(), &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		got := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "cm-") && cm.Data["v"] == v {
				got++
			}
		}
		return got == n, fmt.Sprintf("%d of %d", got, n)
	})
}
