package fleetview

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseSearch(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, tc := range []struct {
		name, method, path string
		gvr                schema.GroupVersionResource
		namespace          string
		watch              bool
		err                string
	}{
		{name: "all namespaces", path: "/apis/apps/v1/deployments", gvr: deployments},
		{name: "one namespace, watch", path: "/apis/apps/v1/namespaces/shop/deployments?watch=true", gvr: deployments, namespace: "shop", watch: true},
		{name: "core group", path: "/api/v1/namespaces/shop/services?watch=1", gvr: schema.GroupVersionResource{Version: "v1", Resource: "services"}, namespace: "shop", watch: true},
		{name: "selectors", path: "/apis/apps/v1/deployments?labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dweb,metadata.namespace%3Dshop", gvr: deployments},
		{name: "get by name", path: "/apis/apps/v1/namespaces/shop/deployments/web", err: "get by name is ambiguous"},
		{name: "no resource", path: "/apis/apps/v1", err: "not found"},
		{name: "write", method: http.MethodPost, path: "/apis/apps/v1/deployments", err: "not supported"},
		{name: "unsupported field", path: "/apis/apps/v1/deployments?fieldSelector=status.phase%3DRunning", err: `field "status.phase" is not supported`},
		{name: "bad label selector", path: "/apis/apps/v1/deployments?labelSelector=a%3D%3D%3Db", err: "labelSelector"},
		{name: "bad timeout", path: "/apis/apps/v1/deployments?watch=true&timeoutSeconds=soon", err: "timeoutSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			sr, err := parseSearch(httptest.NewRequest(method, SearchPrefix+tc.path, nil))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error with %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sr.gvr != tc.gvr || sr.namespace != tc.namespace || sr.watch != tc.watch {
				t.Fatalf("got %v ns=%q watch=%v, want %v ns=%q watch=%v", sr.gvr, sr.namespace, sr.watch, tc.gvr, tc.namespace, tc.watch)
			}
		})
	}
}

func TestSearchSelectorsMatch(t *testing.T) {
	o := &cachedObject{cluster: "east", namespace: "shop", name: "web", labels: map[string]string{"app": "web"}}
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"", true},
		{"labelSelector=app%3Dweb", true},
		{"labelSelector=app%3Ddb", false},
		{"fieldSelector=metadata.name%3Dweb", true},
		{"fieldSelector=metadata.namespace%3Dother", false},
		{"labelSelector=app%3Dweb&fieldSelector=metadata.name!%3Dweb", false},
	} {
		sr, err := parseSearch(httptest.NewRequest(http.MethodGet, SearchPrefix+"/apis/apps/v1/deployments?"+tc.query, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := sr.matches(o); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.query, got, tc.want)
		}
	}
}
