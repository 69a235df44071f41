package dashboard

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestEveryEndpointIsAuthorizedByTheHost serves the dashboard over a real
// host apiserver that answers its TokenReviews and SubjectAccessReviews,
// and asks every endpoint as: nobody, an unknown token, an authenticated
// ServiceAccount without the dashboard role, a tenant allowed into the
// dashboard and to read bindings in team-a only, and a fleet viewer.
func TestEveryEndpointIsAuthorizedByTheHost(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	scheme := controllertest.Scheme(t)
	hub := controllertest.Host(t, host, scheme)
	kube := kubernetes.NewForConfigOrDie(host.RESTConfig())
	for _, ns := range []string{"team-a", "team-b", ExecutionNamespacePrefix() + "east"} {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	seedFleet(t, hub)
	seedEvents(t, kube)
	seedRendered(t, hub)
	// The agent of the Pull cluster north renewed its Lease 42 s ago.
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ClusterLeaseNamespace()}})
	renewed := metav1.NewMicroTime(time.Now().Add(-42 * time.Second))
	testkit.MustCreate(t, hub, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterLeaseNamespace(), Name: "north"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("agent"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &renewed}})
	tokens := grantRoles(t, kube)

	watches, err := NewWatches(host.RESTConfig(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = watches.Start(t.Context()) }()
	// Templates come from an informer cache, as the control plane's: the
	// leader's detectors hold an informer per template kind. Direct reads
	// of a template are counted: a page served from the cache makes none.
	templates, err := cache.New(host.RESTConfig(), cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = templates.Start(t.Context()) }()
	deployments := &unstructured.Unstructured{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if _, err := templates.GetInformer(t.Context(), deployments); err != nil {
		t.Fatal(err)
	}
	var templateGets atomic.Int32
	counted := rest.CopyConfig(host.RESTConfig())
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, "/deployments/") {
				templateGets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	api, err := client.New(counted, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(host.RESTConfig(), nil, Sources{Cache: hub, Templates: templates, API: api, Mapper: hub.RESTMapper(), Watches: watches}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	get := func(token, path string, fragment bool) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if fragment {
			req.Header.Set(FragmentHeader, "main")
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// RBAC reaches the host's authorizer through its informers: wait until
	// the viewer is let in before judging anyone.
	testkit.Eventually(t, 30*time.Second, "the viewer is let in", func() (bool, string) {
		code, body := get(tokens["viewer"], "/fleet", false)
		return code == http.StatusOK, fmt.Sprintf("%d %.200s", code, body)
	})

	testkit.Eventually(t, 30*time.Second, "the events watched", func() (bool, string) {
		return watches.HasSynced() && len(watches.Events()) == 4, fmt.Sprintf("synced %v, %d events", watches.HasSynced(), len(watches.Events()))
	})

	endpoints := []string{"/", "/fleet", "/workloads", "/workloads/team-a/web-a", "/workloads/team-b/web-b", "/rollouts", "/static/app.js", "/static/app.css",
		"/events", "/events?cluster=west", "/workloads?labels=tier%3Dfront", "/workloads?labels=tier%3D%3Dx%3D", "/workloads?labels=team%3Dalpha"}
	type want struct {
		code       int
		has, hasnt []string
	}
	for _, tc := range []struct {
		who   string
		token string
		want  map[string]want
		all   *want
	}{
		{who: "no token", all: &want{code: http.StatusUnauthorized, hasnt: []string{"east", "web-a"}}},
		{who: "an unknown token", token: "not-a-token", all: &want{code: http.StatusUnauthorized, hasnt: []string{"east", "web-a"}}},
		{who: "an authenticated ServiceAccount without the dashboard role", token: tokens["stranger"], all: &want{code: http.StatusForbidden, hasnt: []string{"east", "web-a"}}},
		{who: "the tenant of team-a", token: tokens["tenant"], want: map[string]want{
			"/":          {code: http.StatusFound},
			"/fleet":     {code: http.StatusForbidden, has: []string{"list clusters"}, hasnt: []string{"east", "west"}},
			"/workloads": {code: http.StatusOK, has: []string{"team-a/web-a", "Some namespaces are left out"}, hasnt: []string{"web-b", "team-b"}},
			// The tenant may get the binding but not the Deployment: the
			// rendered manifests, which carry all of it, are not shown.
			"/workloads/team-a/web-a": {code: http.StatusOK, has: []string{"Deployment team-a/web-a", "PropagationPolicy web", "east", "does not allow", `data-diff="none"`},
				hasnt: []string{"nginx:east-only", "nginx:template"}},
			"/workloads/team-b/web-b": {code: http.StatusForbidden, hasnt: []string{"Deployment team-b/web-b"}},
			"/rollouts":               {code: http.StatusOK, has: []string{"No staged rollout.", "left out"}, hasnt: []string{"web-b", "GateTimedOut"}},
			"/static/app.js":          {code: http.StatusOK},
			"/static/app.css":         {code: http.StatusOK},
			// team-a's failover only: not the cluster's (about a cluster-scoped
			// object), team-b's halt, nor the one stored in team-a about
			// team-b's binding; and never what no flotilla reconciler recorded.
			"/events": {code: http.StatusOK, has: []string{`data-event="ClusterFailover"`, "team-a/web-a", "left out"},
				hasnt: []string{"RolloutHalted", "ClusterNotReady", "forged", "kubelet-said", "ScheduleBindingSucceed", ">team-b<"}},
			"/events?cluster=west":             {code: http.StatusOK, has: []string{"No event matches."}, hasnt: []string{"RolloutHalted", "ClusterNotReady"}},
			"/workloads?labels=tier%3Dfront":   {code: http.StatusOK, has: []string{"team-a/web-a"}, hasnt: []string{"web-b"}},
			"/workloads?labels=tier%3D%3Dx%3D": {code: http.StatusBadRequest, has: []string{"label selector", `data-labels-error="true"`}, hasnt: []string{"team-a/web-a"}},
			// team=alpha is the Deployment's label, which the tenant may not
			// list: the filter must not tell them which template has it.
			"/workloads?labels=team%3Dalpha": {code: http.StatusOK, has: []string{"No workload matches."}, hasnt: []string{"team-a/web-a"}},
		}},
		{who: "the fleet viewer", token: tokens["viewer"], want: map[string]want{
			"/": {code: http.StatusFound},
			"/fleet": {code: http.StatusOK, has: []string{`data-cluster="east" data-state="Ready"`, `data-cluster="west" data-state="NotReady"`, "ClusterNotReachable", "cluster.karmada.io/unreachable:NoSchedule", "v1.35.4",
				`data-heartbeat="north"`, "s ago</time>", "probed"}},
			"/workloads": {code: http.StatusOK, has: []string{"team-a/web-a", "team-b/web-b", "placement: east 2, west 1"}, hasnt: []string{"left out"}},
			"/workloads/team-a/web-a": {code: http.StatusOK, has: []string{"Deployment team-a/web-a", `data-diff="east"`,
				`<span class="del">-      - image: nginx:template</span>`, `<span class="add">&#43;      - image: nginx:east-only</span>`, "no Work for this cluster yet"}},
			"/workloads/team-b/web-b": {code: http.StatusOK, has: []string{"Deployment team-b/web-b", "NoClusterFit", "GateTimedOut"}},
			"/rollouts":               {code: http.StatusOK, has: []string{`data-rollout="team-b/web-b" data-phase="Halted"`, "GateTimedOut", "cluster west is Unhealthy", `aria-current="step"`}},
			"/static/app.js":          {code: http.StatusOK},
			"/static/app.css":         {code: http.StatusOK},
			"/events": {code: http.StatusOK, has: []string{`data-event="ClusterFailover"`, `data-event="RolloutHalted"`, `data-event="ClusterNotReady"`, "forged"},
				hasnt: []string{"kubelet-said", "ScheduleBindingSucceed", "left out"}},
			"/events?cluster=west":             {code: http.StatusOK, has: []string{`data-event="RolloutHalted"`, `data-event="ClusterNotReady"`}, hasnt: []string{`data-event="ClusterFailover"`}},
			"/workloads?labels=tier%3Dfront":   {code: http.StatusOK, has: []string{"team-a/web-a"}, hasnt: []string{"team-b/web-b"}},
			"/workloads?labels=tier%3D%3Dx%3D": {code: http.StatusBadRequest, has: []string{"label selector"}},
			// The template's label (the binding has none such), and only the
			// template that carries it: web-b's Deployment is labelled beta.
			"/workloads?labels=team%3Dalpha": {code: http.StatusOK, has: []string{"team-a/web-a"}, hasnt: []string{"team-b/web-b"}},
		}},
	} {
		for _, path := range endpoints {
			w := tc.all
			if w == nil {
				ww := tc.want[path]
				w = &ww
			}
			code, body := get(tc.token, path, false)
			if code != w.code {
				t.Errorf("%s GET %s: status %d, want %d: %.300s", tc.who, path, code, w.code, body)
			}
			for _, s := range w.has {
				if !strings.Contains(body, s) {
					t.Errorf("%s GET %s: the page lacks %q", tc.who, path, s)
				}
			}
			for _, s := range w.hasnt {
				if strings.Contains(body, s) {
					t.Errorf("%s GET %s: the page shows %q", tc.who, path, s)
				}
			}
		}
	}
	// Every workload page, the viewer's with its diff among them, read the
	// template from the cache, and a change of the template shows there.
	if n := templateGets.Load(); n != 0 {
		t.Errorf("the workload pages read the template from the host %d times, want 0 (the cache)", n)
	}
	var d appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "team-a", Name: "web-a"}, &d, func() { d.Spec.Template.Spec.Containers[0].Image = "nginx:changed" })
	testkit.Eventually(t, 30*time.Second, "the changed template in the diff", func() (bool, string) {
		_, body := get(tokens["viewer"], "/workloads/team-a/web-a", true)
		return strings.Contains(body, "-      - image: nginx:changed"), fmt.Sprintf("%.300s", body)
	})
	if n := templateGets.Load(); n != 0 {
		t.Errorf("the workload page read the changed template from the host %d times, want 0", n)
	}

	// A page links its style sheet and script under fingerprinted names
	// the browser keeps (one request per page, not three), still only for
	// a user the host lets in.
	_, page := get(tokens["viewer"], "/fleet", false)
	css := regexp.MustCompile(`/static/app\.[0-9a-f]{8}\.css`).FindString(page)
	js := regexp.MustCompile(`/static/app\.[0-9a-f]{8}\.js`).FindString(page)
	if css == "" || js == "" {
		t.Fatalf("the fleet page links no fingerprinted assets: %.400s", page)
	}
	for _, asset := range []string{css, js} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+asset, nil)
		req.Header.Set("Authorization", "Bearer "+tokens["viewer"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != http.StatusOK || len(body) == 0 || !strings.Contains(cc, "immutable") || !strings.Contains(cc, "private") {
			t.Errorf("GET %s: status %d, %d bytes, Cache-Control %q; want 200, the asset, private and immutable", asset, resp.StatusCode, len(body), cc)
		}
		if code, _ := get("", asset, false); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: status %d, want 401", asset, code)
		}
	}

	// The fragment the page polls is the main section only, under the same
	// checks.
	if code, body := get(tokens["viewer"], "/fleet", true); code != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, "east") {
		t.Errorf("viewer fragment: status %d, body %.200s", code, body)
	}
	if code, _ := get("", "/fleet", true); code != http.StatusUnauthorized {
		t.Errorf("fragment without a token: status %d, want 401", code)
	}
}

// seedFleet creates two Clusters (east Ready, west not reachable and
// tainted) and a binding in each of team-a and team-b, with the statuses
// the control plane would write.
func seedFleet(t *testing.T, hub client.Client) {
	t.Helper()
	now := metav1.Now()
	for _, c := range []struct {
		name, status, reason string
		taints               []corev1.Taint
		mode                 api.ClusterSyncMode
	}{
		{"east", "True", api.ReasonClusterReady, nil, api.Push},
		{"west", "False", api.ReasonClusterNotReachable, []corev1.Taint{{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}}, api.Push},
		{"north", "True", api.ReasonClusterReady, nil, api.Pull},
	} {
		cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Spec: api.ClusterSpec{APIEndpoint: "https://127.0.0.1:1", SyncMode: c.mode, Taints: c.taints}}
		testkit.MustCreate(t, hub, cl)
		cl.Status = api.ClusterStatus{
			KubernetesVersion: "v1.35.4",
			Conditions:        []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionStatus(c.status), Reason: c.reason, Message: "probe", LastTransitionTime: now}},
		}
		if err := hub.Status().Update(t.Context(), cl); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []struct {
		ns, name string
		clusters []api.TargetCluster
		cond     metav1.Condition
	}{
		{"team-a", "web-a", []api.TargetCluster{{Name: "east", Replicas: 2}, {Name: "west", Replicas: 1}},
			metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: now}},
		{"team-b", "web-b", nil,
			metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionFalse, Reason: "NoClusterFit", Message: "0/2 clusters are available", LastTransitionTime: now}},
	} {
		rb := &workv1.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: b.name, Labels: map[string]string{"tier": map[string]string{"team-a": "front", "team-b": "back"}[b.ns]}, Annotations: map[string]string{
				"propagationpolicy.karmada.io/name": "web", "propagationpolicy.karmada.io/namespace": b.ns}},
			Spec: api.ResourceBindingSpec{Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: b.ns, Name: b.name}, Clusters: b.clusters},
		}
		testkit.MustCreate(t, hub, rb)
		rb.Status.Conditions = []metav1.Condition{b.cond}
		if b.ns == "team-b" {
			rb.Status.Rollout = &api.BindingRolloutStatus{Revision: "2", Phase: api.BindingRolloutHalted, Stage: "canary", Reason: "GateTimedOut",
				Message: "stage canary: cluster west is Unhealthy", Stages: []api.BindingRolloutStage{{Name: "canary", Clusters: []string{"west"}}, {Name: "remaining"}}}
		}
		if err := hub.Status().Update(t.Context(), rb); err != nil {
			t.Fatal(err)
		}
	}
}

// grantRoles makes the host's users of the test and returns their tokens:
// stranger (authenticated, no role), tenant (the dashboard's entry and
// bindings in team-a) and viewer (the entry, clusters and every binding).
func grantRoles(t *testing.T, kube kubernetes.Interface) map[string]string {
	t.Helper()
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The groups are spelled out as an operator writes them in a role (and
	// as the chart's tenant role grants bindings), not taken from the code
	// under test.
	read := []string{"get", "list", "watch"}
	must(kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dashboard-entry"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{EntryPath}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}))
	must(kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"cluster.flotilla.io"}, Resources: []string{"clusters"}, Verbs: read},
			{APIGroups: []string{"work.flotilla.io"}, Resources: []string{"resourcebindings"}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: read},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: read},
		}}, metav1.CreateOptions{}))
	must(kube.RbacV1().Roles("team-a").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bindings-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"work.flotilla.io"}, Resources: []string{"resourcebindings"}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: read},
		}}, metav1.CreateOptions{}))
	tokens := map[string]string{}
	for _, name := range []string{"stranger", "tenant", "viewer"} {
		tokens[name] = serviceAccountToken(t, kube, name)
	}
	sa := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}
	}
	for _, b := range []struct{ name, role, sa string }{{"tenant-entry", "dashboard-entry", "tenant"}, {"viewer-entry", "dashboard-entry", "viewer"}, {"viewer-fleet", "fleet-reader", "viewer"}} {
		must(kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role}, Subjects: sa(b.sa)}, metav1.CreateOptions{}))
	}
	must(kube.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bindings"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "bindings-reader"}, Subjects: sa("tenant")}, metav1.CreateOptions{}))
	return tokens
}

// serviceAccountToken creates a ServiceAccount in default and returns a
// short-lived token for it from the TokenRequest API.
func serviceAccountToken(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := kube.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(600)
	tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", name, err)
	}
	return tr.Status.Token
}

// seedEvents records, as the control plane's reconcilers do
// (events.k8s.io/v1, their reporting controller), a cluster failover of
// team-a's binding, a halted rollout of team-b's, a cluster not ready (about
// the cluster-scoped Cluster, stored in default), and one stored in team-a
// about team-b's binding; and two the page must never show: another
// component's event with a watched reason, and a flotilla reason the page
// does not watch.
func seedEvents(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	binding := func(ns, name string) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "ResourceBinding", Namespace: ns, Name: name}
	}
	for i, e := range []struct {
		ns, controller, reason, note string
		regarding                    corev1.ObjectReference
	}{
		{"team-a", "flotilla-scheduler", "ClusterFailover", "left cluster east, which has the untolerated taint cluster.karmada.io/unreachable:NoExecute", binding("team-a", "web-a")},
		{"team-b", "flotilla-binding", "RolloutHalted", "revision 2: stage canary: cluster west is Unhealthy", binding("team-b", "web-b")},
		{"default", "flotilla-cluster-status", "ClusterNotReady", "ClusterNotReachable: cluster west: connection refused",
			corev1.ObjectReference{APIVersion: "cluster.flotilla.io/v1alpha1", Kind: "Cluster", Name: "west"}},
		{"team-a", "flotilla-binding", "RolloutHalted", "forged: about team-b", binding("team-b", "web-b")},
		{"team-a", "kubelet", "SyncFailed", "kubelet-said", binding("team-a", "web-a")},
		{"team-a", "flotilla-scheduler", "ScheduleBindingSucceed", "placed", binding("team-a", "web-a")},
	} {
		_, err := kube.EventsV1().Events(e.ns).Create(t.Context(), &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("e%d", i)},
			EventTime:  metav1.NowMicro(), ReportingController: e.controller, ReportingInstance: e.controller + "-test",
			Action: "Test", Reason: e.reason, Note: e.note, Type: corev1.EventTypeWarning, Regarding: e.regarding,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
}

// seedRendered creates team-a's Deployment web-a (the template of the
// binding web-a, labelled team=alpha) and its Work for east, whose
// manifest an override gave another image, and team-b's web-b (labelled
// team=beta).
func seedRendered(t *testing.T, hub client.Client) {
	t.Helper()
	d := &appsv1.Deployment{}
	testkit.MustYAML(t, d, `
metadata: {namespace: team-a, name: web-a, labels: {team: alpha}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:template"}]}
`)
	testkit.MustCreate(t, hub, d)
	beta := d.DeepCopy()
	beta.ObjectMeta = metav1.ObjectMeta{Namespace: "team-b", Name: "web-b", Labels: map[string]string{"team": "beta"}}
	testkit.MustCreate(t, hub, beta)
	var rb workv1.ResourceBinding
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web-a"}, &rb); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"team-a","name":"web-a","labels":{"flotilla.io/fleet":"test"}},
		"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"%s"}]}}}}`, "nginx:east-only")
	w := &workv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ExecutionNamespacePrefix() + "east", Name: "web-a-1",
		Labels: map[string]string{LabelBindingPermanentID: string(rb.UID)}}}
	w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}
	testkit.MustCreate(t, hub, w)
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
