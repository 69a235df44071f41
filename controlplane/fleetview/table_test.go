package fleetview

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// tableCache is a cache of Deployments in two members, put straight into
// the informer stores, and a function that adds one more the way an
// informer does (store first, then the event).
func tableCache(t *testing.T) (*Cache, func(ns, name, cluster string, ready int64)) {
	t.Helper()
	c := NewCache(CacheOptions{})
	ck := &cachedKind{gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true,
		clusters: map[string]*memberInformer{}, watchers: map[*watcher]struct{}{}}
	c.kinds[deploymentsGVR] = ck
	add := func(ns, name, cluster string, ready int64) {
		u := typicalDeployment(ns, name)
		if err := unstructured.SetNestedField(u.Object, ready, "status", "readyReplicas"); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(u.Object, ready, "status", "availableReplicas"); err != nil {
			t.Fatal(err)
		}
		o, err := compact(u, cluster)
		if err != nil {
			t.Fatal(err)
		}
		mi := ck.clusters[cluster]
		if mi == nil {
			inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			mi = &memberInformer{informer: inf, cancel: func() {}}
			ck.clusters[cluster] = mi
		}
		if err := mi.informer.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
		c.notify(deploymentsGVR, eventAdded, o)
	}
	add("a", "web", "west", 3)
	add("a", "web", "east", 1)
	add("b", "db", "east", 0)
	add("a", "api", "east", 2)
	return c, add
}

// getTable lists Deployments of the cache as user, who may list in the
// namespaces of allow ("*": everywhere), with the Accept header kubectl
// get sends, and decodes what comes back.
func getTable(t *testing.T, c *Cache, allow allowNamespaces, query string) (string, metav1.Table) {
	t.Helper()
	h := SearchHandler(c, authorizer.AuthorizerFunc(allow.Authorize))
	req := httptest.NewRequestWithContext(request.WithUser(context.Background(), &user.DefaultInfo{Name: "someone"}),
		http.MethodGet, SearchPrefix+"/apis/apps/v1/deployments"+query, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var tbl metav1.Table
	body, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(body, &tbl); err != nil {
		t.Fatal(err)
	}
	if tbl.Kind != "Table" {
		t.Fatalf("kind %q, want a Table (Content-Type %q)", tbl.Kind, rec.Header().Get("Content-Type"))
	}
	return rec.Header().Get("Content-Type"), tbl
}

// TestSearchServesTables is what kubectl get reads from the cache: a
// Table with CLUSTER and the columns a member prints for Deployments
// (READY, UP-TO-DATE, AVAILABLE, AGE), each row's namespace and cluster in
// its metadata, in list order; a tenant's table holds only its namespace.
func TestSearchServesTables(t *testing.T) {
	c, add := tableCache(t)
	ct, tbl := getTable(t, c, allowNamespaces{"*": true}, "")
	if !strings.Contains(ct, "as=Table") {
		t.Errorf("Content-Type %q, want the Table media type", ct)
	}
	var cols []string
	for _, d := range tbl.ColumnDefinitions {
		cols = append(cols, d.Name)
	}
	if diff := cmp.Diff([]string{"Cluster", "Name", "Ready", "Up-to-date", "Available", "Age"}, cols); diff != "" {
		t.Fatalf("columns (-want +got):\n%s", diff)
	}
	rows := func(tbl metav1.Table) []string {
		var out []string
		for _, r := range tbl.Rows {
			var m metav1.PartialObjectMetadata
			if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
				t.Fatal(err)
			}
			if m.Annotations[ClusterAnnotation] != r.Cells[0] || m.Name != r.Cells[1] || m.CreationTimestamp.IsZero() {
				t.Fatalf("row %v: object metadata %+v does not match", r.Cells, m.ObjectMeta)
			}
			b, _ := json.Marshal(r.Cells[:5])
			out = append(out, m.Namespace+" "+string(b))
		}
		return out
	}
	want := []string{
		`a ["east","api","2/3",3,2]`,
		`a ["east","web","1/3",3,1]`,
		`a ["west","web","3/3",3,3]`,
		`b ["east","db","0/3",3,0]`,
	}
	if diff := cmp.Diff(want, rows(tbl)); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	if age, _ := tbl.Rows[0].Cells[5].(string); age == "" || age == "<unknown>" {
		t.Errorf("age %v, want a duration", tbl.Rows[0].Cells[5])
	}

	// The tenant of namespace a sees a's rows only, and a later request
	// by everyone still sees b: the tenant's filtering did not touch the
	// cache's sorted list.
	_, tbl = getTable(t, c, allowNamespaces{"a": true}, "")
	if diff := cmp.Diff(want[:3], rows(tbl)); diff != "" {
		t.Fatalf("tenant of a (-want +got):\n%s", diff)
	}
	add("a", "aaa", "west", 1)
	_, tbl = getTable(t, c, allowNamespaces{"*": true}, "")
	if diff := cmp.Diff(append([]string{`a ["west","aaa","1/3",3,1]`}, want...), rows(tbl)); diff != "" {
		t.Fatalf("after an added Deployment (-want +got):\n%s", diff)
	}

	// includeObject=None: no objects; Object: the cached object itself.
	_, tbl = getTable(t, c, allowNamespaces{"*": true}, "?includeObject=None")
	if len(tbl.Rows) != 5 || len(tbl.Rows[0].Object.Raw) != 0 {
		t.Fatalf("includeObject=None: %d rows, first object %s", len(tbl.Rows), tbl.Rows[0].Object.Raw)
	}
	_, tbl = getTable(t, c, allowNamespaces{"*": true}, "?includeObject=Object&labelSelector=app%3Ddb")
	var obj unstructured.Unstructured
	if len(tbl.Rows) != 1 || obj.UnmarshalJSON(tbl.Rows[0].Object.Raw) != nil || obj.GetKind() != "Deployment" || obj.GetName() != "db" {
		t.Fatalf("includeObject=Object with app=db: %d rows, %s", len(tbl.Rows), obj.GetName())
	}
}

func TestWantsTable(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", true},
		{"application/json;as=Table;g=meta.k8s.io;v=v1", true},
		{"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", false},
		{"application/json", false},
		{"application/json,application/json;as=Table;v=v1;g=meta.k8s.io", false},
		{"", false},
	} {
		if got := wantsTable(tc.accept); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.accept, got, tc.want)
		}
	}
}

func TestRenderRow(t *testing.T) {
	u := typicalDeployment("a", "web")
	other := typicalDeployment("a", "web")
	other.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"Deployment", u, `"m1","web","3/3",3,3`},
		{"a kind without columns", other, `"m1","web"`},
	} {
		got, err := renderRow(tc.u, "m1")
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
