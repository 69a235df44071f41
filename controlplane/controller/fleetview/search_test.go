package fleetview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/search/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// TestSearchCacheAcrossMembersAndTenants runs the search cache behind a
// real aggregating host over two real members. A ResourceRegistry makes
// both members' Deployments listable with the cluster annotation and
// without managed fields, through label and field selectors; a watch sees
// a member's change. The attack is tenant isolation: a host user who may
// list Deployments in namespace a only must see nothing of namespace b, in
// a list across namespaces or in a watch, from either member, and is
// refused a list of b outright (the cache reads members with the control
// plane's own credentials, so without the per-namespace check on the host
// the tenant would see everything). Deleting the registry stops serving.
func TestSearchCacheAcrossMembersAndTenants(t *testing.T) {
	begin := time.Now()
	env := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly, Aggregation: true})
	host, members := env.Clusters[0], env.Clusters[1:]
	f := controllertest.Fleet{Host: host, Hub: controllertest.SystemHost(t, host), Clusters: members, Scheme: controllertest.Scheme(t)}
	hostCS := host.Clientset(t)
	ctx := t.Context()

	for _, m := range members {
		controllertest.RegisterMember(t, f.Hub, m)
		cs := m.Clientset(t)
		for _, ns := range []string{"a", "b"} {
			must(t, create(ctx, cs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		}
		must(t, create(ctx, cs, deployment("a", "web", "web")))
		must(t, create(ctx, cs, deployment("a", "db", "db")))
		must(t, create(ctx, cs, deployment("b", "web", "web")))
	}
	// The tenant may list and watch Deployments in namespace a of the
	// host, and nothing else.
	must(t, create(ctx, hostCS, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}))
	must(t, create(ctx, hostCS, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "deployment-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list", "watch"}}}}))
	must(t, create(ctx, hostCS, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "tenant-a"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployment-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-a"}}}))

	// Using the cache at all is a grant of its own on the host (the host
	// authorises the aggregated path before forwarding it); bob has it
	// too, without any right on Deployments.
	must(t, create(ctx, hostCS, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "search-user"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetview.Group}, Resources: []string{"search/api", "search/apis"}, Verbs: []string{"get"}}}}))
	must(t, create(ctx, hostCS, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "search-users"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "search-user"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-a"},
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}))

	ln, certPEM := serveProxy(t, host)
	serving, err := dynamiccertificates.NewStaticCertKeyContent("cluster-proxy", certPEM.cert, certPEM.key)
	if err != nil {
		t.Fatal(err)
	}
	f.StartControlPlane(t, func(o *shared.Options) {
		o.ClusterProxy = fleetview.Options{Listener: ln, Certificate: serving, RequestTimeout: 5 * time.Second}
	})

	n1, n2 := members[0].Name, members[1].Name
	reg := &searchv1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "deployments"}, Spec: searchv1.ResourceRegistrySpec{
		ResourceSelectors: []searchv1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}
	reg.Spec.TargetCluster.ClusterNames = []string{n1, n2}
	testkit.MustCreate(t, f.Hub, reg)

	admin := searchClient(t, host, "")
	tenant := searchClient(t, host, "tenant-a")
	var all []unstructured.Unstructured
	testkit.Eventually(t, time.Minute, "both members' six Deployments listed through the APIService", func() (bool, string) {
		list, err := admin.Resource(deployments).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		all = list.Items
		return len(all) == 6, fmt.Sprint(names(all))
	})
	for _, o := range all {
		if c := o.GetAnnotations()[fleetview.ClusterAnnotation]; c != n1 && c != n2 {
			t.Fatalf("%s/%s: cluster annotation %q, want %s or %s", o.GetNamespace(), o.GetName(), c, n1, n2)
		}
		if len(o.GetManagedFields()) > 0 {
			t.Fatalf("%s/%s: managed fields kept in the cache", o.GetNamespace(), o.GetName())
		}
	}
	testkit.Eventually(t, 30*time.Second, "Synced=True on the registry", func() (bool, string) {
		var got searchv1.ResourceRegistry
		if err := f.Hub.Get(ctx, client.ObjectKey{Name: reg.Name}, &got); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(got.Status.Conditions, searchv1.ConditionSynced)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", got.Status.Conditions)
	})
	wantNames(t, "label selector app=web", admin.Resource(deployments), metav1.ListOptions{LabelSelector: "app=web"},
		"a/web@"+n1, "a/web@"+n2, "b/web@"+n1, "b/web@"+n2)
	wantNames(t, "field selector on name and namespace", admin.Resource(deployments),
		metav1.ListOptions{FieldSelector: "metadata.namespace=a,metadata.name=db"}, "a/db@"+n1, "a/db@"+n2)

	// The tenant, across all namespaces, sees namespace a only.
	wantNames(t, "tenant-a across namespaces", tenant.Resource(deployments), metav1.ListOptions{},
		"a/db@"+n1, "a/db@"+n2, "a/web@"+n1, "a/web@"+n2)
	// The same as a Table, as kubectl get asks for it through the host's
	// aggregator: the Deployment columns, and namespace a only.
	tbl := searchTable(t, host, "tenant-a", "/apis/apps/v1/deployments")
	var cols, rows []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	for _, r := range tbl.Rows {
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("%s/%s@%v", m.Namespace, r.Cells[1], r.Cells[0]))
	}
	slices.Sort(rows)
	if want := []string{"Cluster", "Name", "Ready", "Up-to-date", "Available", "Age"}; !slices.Equal(cols, want) {
		t.Fatalf("tenant-a's table: columns %v, want %v", cols, want)
	}
	if want := []string{"a/db@" + n1, "a/db@" + n2, "a/web@" + n1, "a/web@" + n2}; !slices.Equal(rows, want) {
		t.Fatalf("tenant-a's table: rows %v, want %v", rows, want)
	}
	if _, err := tenant.Resource(deployments).Namespace("b").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("tenant-a listing namespace b: want Forbidden, got %v", err)
	}
	wantNames(t, "bob, who may list Deployments nowhere", searchClient(t, host, "bob").Resource(deployments), metav1.ListOptions{})
	if _, err := searchClient(t, host, "carol").Resource(deployments).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "search/apis") {
		t.Fatalf("carol, without the grant to use the cache: want the host's Forbidden on search/apis, got %v", err)
	}

	// Watches: the tenant's across namespaces and the admin's. Namespace
	// b's new Deployment is created before namespace a's in the same
	// member (one informer, so in that order): the tenant's watch must
	// reach a's without having shown b's.
	tw, err := tenant.Resource(deployments).Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptr.To[int64](60)})
	if err != nil {
		t.Fatalf("tenant-a watch: %v", err)
	}
	defer tw.Stop()
	aw, err := admin.Resource(deployments).Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptr.To[int64](60), LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("admin watch: %v", err)
	}
	defer aw.Stop()
	m2 := members[1].Clientset(t)
	must(t, create(ctx, m2, deployment("b", "secret", "web")))
	must(t, create(ctx, m2, deployment("a", "new", "web")))
	seen := waitEvent(t, tw, watch.Added, "a", "new", n2)
	for _, e := range seen {
		if e.namespace != "a" {
			t.Fatalf("tenant-a's watch showed %s/%s from %s: %v", e.namespace, e.name, e.cluster, seen)
		}
	}
	m1 := members[0].Clientset(t)
	_, err = m1.AppsV1().Deployments("b").Patch(ctx, "web", "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"changed":"yes"}}}`), metav1.PatchOptions{})
	must(t, err)
	waitEvent(t, aw, watch.Modified, "b", "web", n1)

	// Deleting the registry stops serving the kind.
	must(t, f.Hub.Delete(ctx, reg))
	testkit.Eventually(t, 30*time.Second, "the cache stops serving deployments", func() (bool, string) {
		_, err := admin.Resource(deployments).List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	t.Logf("whole test %s", time.Since(begin).Round(time.Millisecond))
}

func deployment(ns, name, app string) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: app, Image: "nginx"}}}}}}
}

// create creates obj with the typed clientset.
func create(ctx context.Context, cs kubernetes.Interface, obj any) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.Deployment:
		_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("create %T: not handled", obj)
	}
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// searchClient reads the search cache through the host's APIService, as
// the host's admin or, with as, as that user.
func searchClient(t *testing.T, host *testenv.Cluster, as string) *dynamic.DynamicClient {
	t.Helper()
	cfg := host.RESTConfig()
	cfg.Host = strings.TrimSuffix(cfg.Host, "/") + fleetview.SearchPrefix
	if as != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: as}
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// searchTable lists path of the search cache through the host's
// APIService as user as, asking for a Table as kubectl get does.
func searchTable(t *testing.T, host *testenv.Cluster, as, path string) metav1.Table {
	t.Helper()
	cfg := host.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: as}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+fleetview.SearchPrefix+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil || resp.StatusCode != http.StatusOK || tbl.Kind != "Table" {
		t.Fatalf("table of %s as %s: status %d, kind %q, %v", path, as, resp.StatusCode, tbl.Kind, err)
	}
	return tbl
}

func names(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, o.GetNamespace()+"/"+o.GetName()+"@"+o.GetAnnotations()[fleetview.ClusterAnnotation])
	}
	slices.Sort(out)
	return out
}

func wantNames(t *testing.T, what string, r dynamic.NamespaceableResourceInterface, opts metav1.ListOptions, want ...string) {
	t.Helper()
	list, err := r.List(t.Context(), opts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	slices.Sort(want)
	if got := names(list.Items); !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

type seenEvent struct {
	typ                      watch.EventType
	namespace, name, cluster string
}

// waitEvent reads w until an event typ for namespace/name from cluster,
// and returns every event read.
func waitEvent(t *testing.T, w watch.Interface, typ watch.EventType, ns, name, cluster string) []seenEvent {
	t.Helper()
	var seen []seenEvent
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended before %s %s/%s from %s; saw %v", typ, ns, name, cluster, seen)
			}
			u, isU := ev.Object.(*unstructured.Unstructured)
			if !isU {
				t.Fatalf("watch event %s of %T: %v", ev.Type, ev.Object, ev.Object)
			}
			e := seenEvent{ev.Type, u.GetNamespace(), u.GetName(), u.GetAnnotations()[fleetview.ClusterAnnotation]}
			seen = append(seen, e)
			if e == (seenEvent{typ, ns, name, cluster}) {
				return seen
			}
		case <-timeout:
			t.Fatalf("no %s %s/%s from %s within 30s; saw %v", typ, ns, name, cluster, seen)
		}
	}
}

type certKey struct{ cert, key []byte }

// serveProxy listens for the aggregated API on loopback and registers its
// APIService; the host's aggregation layer reaches it through an
// ExternalName Service naming localhost (testenv.RegisterAPIService).
func serveProxy(t *testing.T, host *testenv.Cluster) (net.Listener, certKey) {
	t.Helper()
	const service = "flotilla-cluster-proxy"
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(service+"."+shared.SystemNamespace+".svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	if err := host.RegisterAPIService(t.Context(), testenv.APIService{Group: fleetview.Group, Version: fleetview.Version,
		Namespace: shared.SystemNamespace, Service: service, Port: ln.Addr().(*net.TCPAddr).Port, CABundle: certPEM}); err != nil {
		t.Fatal(err)
	}
	return ln, certKey{certPEM, keyPEM}
}
