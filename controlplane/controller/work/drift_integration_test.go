package work_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestResyncReadsTheMemberOnlyOnDrift: the execution controller's resync
// (1 s here) sends nothing to a member whose applied objects are watched
// and unchanged: not a GET, not an apply. A hand edit of a field flotilla
// applied (kubectl edit of the image) is still taken back at the next
// resync, and a label flotilla does not own is left to the member.
func TestResyncReadsTheMemberOnlyOnDrift(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 1)
	// The status backstop is out of the way: only the execution's resync
	// could read the member in the quiet window.
	env.StartControlPlane(t, func(o *shared.Options) { o.Resync, o.StatusResync = time.Second, 10*time.Minute })
	hub, name := env.Hub, env.Names[0]
	m := env.Members[name]
	ctx := t.Context()

	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(name))
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, env.Members, map[string]int32{name: 2})
	work := webWork(name)
	waitWorkAvailable(t, hub, work)
	// A resync or two so the watch has synced and seen the last apply.
	time.Sleep(2 * time.Second)

	t.Log("nothing changed: four resyncs read and write nothing in the member")
	quietFor(t, env.Clusters[0], 4*time.Second, "4 resyncs")

	t.Log("a label flotilla does not own is the member's: it stays")
	var d appsv1.Deployment
	key := client.ObjectKey{Namespace: "default", Name: "web"}
	testkit.MustUpdate(t, m, key, &d, func() { d.Labels["tenant.example.com/note"] = "mine" })

	t.Log("the image edited by hand in the member is taken back at the next resync")
	testkit.MustUpdate(t, m, key, &d, func() { d.Spec.Template.Spec.Containers[0].Image = "nginx:hand-edited" })
	testkit.Eventually(t, 10*time.Second, "hand-edited image taken back", func() (bool, string) {
		if err := m.Get(ctx, key, &d); err != nil {
			return false, err.Error()
		}
		return d.Spec.Template.Spec.Containers[0].Image == "nginx", "image " + d.Spec.Template.Spec.Containers[0].Image
	})
	if d.Labels["tenant.example.com/note"] != "mine" {
		t.Errorf("the member's own label was removed: labels %v", d.Labels)
	}
}

// deploymentRequests is the member apiserver's count of requests on
// deployments (apiserver_request_total, every verb, code and scope).
// webWork is the key of the web Deployment's Work for cluster name.
func webWork(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: shared.ExecutionNamespace(name), Name: shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})}
}

// waitWorkAvailable waits until the Work reports Available: the member
// was read back, so its watch of the applied objects has started.
func waitWorkAvailable(t *testing.T, hub client.Client, work client.ObjectKey) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "work "+work.String()+" available", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(t.Context(), work, &w); err != nil {
			return false, err.Error()
		}
		return apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable), fmt.Sprintf("conditions %+v", w.Status.Conditions)
	})
}

// quietFor fails the test when the member's apiserver serves any request
// on deployments during d; what names the passes d spans.
func quietFor(t *testing.T, member *testenv.Cluster, d time.Duration, what string) {
	t.Helper()
	before := deploymentRequests(t, member)
	time.Sleep(d)
	if after := deploymentRequests(t, member); after != before {
		t.Fatalf("member requests on deployments over %s of an unchanged Work: %v, then %v; want none", what, before, after)
	}
}

func deploymentRequests(t *testing.T, member *testenv.Cluster) float64 {
	t.Helper()
	return countDeploymentRequests(t, member, func(l string) bool {
		return !strings.Contains(l, `verb="WATCH"`) && !strings.Contains(l, `verb="LIST"`)
	})
}

// deploymentGets is the member apiserver's count of GETs of single
// Deployments (not of their status subresource): the read-backs.
func deploymentGets(t *testing.T, member *testenv.Cluster) float64 {
	t.Helper()
	return countDeploymentRequests(t, member, func(l string) bool { return strings.Contains(l, `verb="GET"`) && strings.Contains(l, `subresource=""`) })
}

// countDeploymentRequests sums the member apiserver's
// apiserver_request_total on deployments over the series match keeps.
func countDeploymentRequests(t *testing.T, member *testenv.Cluster, match func(line string) bool) float64 {
	t.Helper()
	cfg := member.RESTConfig()
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
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("member /metrics: %s: %s", resp.Status, body)
	}
	total := 0.0
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		l := lines.Text()
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `resource="deployments"`) || !match(l) {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("member /metrics line %q: %v", l, err)
		}
		total += v
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
