package execution

import (
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// testFleet is the fleet name the tests apply for.
const testFleet = "prod"

// GVRs the tests read directly.
var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// env is a running fleet with a connected target per member.
type env struct {
	fleet   *testenv.Fleet
	names   []string
	targets Targets
}

// startEnv starts three apiserver-only members. The clients' token bucket
// is opened well past testenv's 50 QPS: the tests and the benchmark measure
// execution, and a member connection's rate limit is package member's
// choice. (At 50 QPS the bucket, not the apiservers, sets the benchmark's
// latency once its burst is spent.)
func startEnv(t testing.TB) *env {
	t.Helper()
	f := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	e := &env{fleet: f, targets: Targets{}}
	for _, c := range f.Clusters {
		e.names = append(e.names, c.Name)
		cfg := c.RESTConfig()
		cfg.QPS, cfg.Burst = 1000, 2000
		e.targets[c.Name] = newTarget(t, cfg)
	}
	return e
}

// newTarget builds the clients execution needs from a rest config, as
// package member will.
func newTarget(t testing.TB, cfg *rest.Config) Target {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Dynamic: dyn, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// executor returns an executor of testFleet over the env's members.
func (e *env) executor() *Executor {
	return &Executor{Clusters: e.targets, Fleet: testFleet}
}

// client returns the dynamic client of one member.
func (e *env) client(cluster string) dynamic.Interface { return e.targets[cluster].Dynamic }

// get reads an object from a member; nil when it does not exist.
func (e *env) get(t testing.TB, cluster string, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := e.client(cluster).Resource(gvr).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: get %s %s/%s: %v", cluster, gvr.Resource, namespace, name, err)
	}
	return obj
}

// create creates obj in a member directly, as someone other than flotilla.
func (e *env) create(t testing.TB, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := e.client(cluster).Resource(gvr).Namespace(obj.GetNamespace()).Create(t.Context(), obj, metav1.CreateOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatalf("%s: create %s %s: %v", cluster, obj.GetKind(), obj.GetName(), err)
	}
	return got
}

// makeNamespace creates a namespace in every member, so tests do not share
// objects.
func (e *env) makeNamespace(t testing.TB, name string) {
	t.Helper()
	ns := apitest.MakeTemplate("v1", "Namespace", name, "").Obj()
	for _, c := range e.names {
		e.create(t, c, namespaces, ns)
	}
}

// rendered renders tmpl for fleet and the clusters, with Duplicated
// scheduling, and returns cluster → object.
func rendered(t testing.TB, fleet string, tmpl *unstructured.Unstructured, clusters ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	in := render.Input{Template: tmpl, Fleet: fleet}
	for _, c := range clusters {
		in.Clusters = append(in.Clusters, render.Target{Cluster: apitest.MakeCluster(c).Obj()})
	}
	works, err := render.Render(in)
	if err != nil {
		t.Fatalf("render %s: %v", tmpl.GetName(), err)
	}
	out := map[string]*unstructured.Unstructured{}
	for c, w := range works {
		out[c] = w.Object
	}
	return out
}

// applyReq renders tmpl for the clusters in testFleet.
func applyReq(t testing.TB, tmpl *unstructured.Unstructured, clusters ...string) ApplyRequest {
	t.Helper()
	return ApplyRequest{Template: api.TemplateRefOf(tmpl), Objects: rendered(t, testFleet, tmpl, clusters...)}
}

// mustSucceed fails the test when any outcome has an error.
func mustSucceed(t testing.TB, res Result) {
	t.Helper()
	if err := res.Err(); err != nil {
		t.Fatalf("unexpected error: %v\noutcomes: %s", err, summary(res))
	}
}

// summary is a compact listing of outcomes for failure messages.
func summary(res Result) string {
	out := ""
	for _, o := range res.Outcomes {
		out += fmt.Sprintf("\n  %s %s: %s changed=%v rv=%s err=%v reason=%q", o.Cluster, o.Object.Describe(), o.Action, o.Changed, o.ResourceVersion, o.Err, o.Reason)
	}
	return out
}

// actions lists "cluster Kind ns/name: Action" for comparison with cmp.Diff.
func actions(res Result) []string {
	var out []string
	for _, o := range res.Outcomes {
		out = append(out, fmt.Sprintf("%s %s: %s", o.Cluster, o.Object.Describe(), o.Action))
	}
	return out
}

// listNames lists the names of the objects of a resource with this
// fleet's labels in a member's namespace, sorted.
func (e *env) listNames(t testing.TB, cluster string, gvr schema.GroupVersionResource, namespace string) []string {
	t.Helper()
	list, err := e.client(cluster).Resource(gvr).Namespace(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: render.LabelFleet + "=" + testFleet})
	if err != nil {
		t.Fatalf("%s: list %s in %s: %v", cluster, gvr.Resource, namespace, err)
	}
	var out []string
	for _, item := range list.Items {
		out = append(out, item.GetName())
	}
	slices.Sort(out)
	return out
}
