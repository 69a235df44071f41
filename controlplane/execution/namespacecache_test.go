package execution

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestNamespaceCache: with Executor.Namespaces, a namespace found or
// created by one call is not read again by the next, and a namespace the
// cache wrongly believes in (gone since) is created and the object applied
// in the same call.
func TestNamespaceCache(t *testing.T) {
	e := startEnv(t)
	member := e.fleet.Clusters[0]
	var nsReads atomic.Int64
	target := countingTarget(t, member.RESTConfig(), func(r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && strings.Count(r.URL.Path, "/") == 4 {
			nsReads.Add(1)
		}
	})
	ex := &Executor{Clusters: Targets{member.Name: target}, Fleet: testFleet, Namespaces: NewNamespaceCache(time.Minute)}

	apply := func(name, ns string) []string {
		t.Helper()
		res := ex.Apply(t.Context(), applyReq(t, apitest.MakeTemplate("v1", "ConfigMap", name, ns).Obj(), member.Name))
		mustSucceed(t, res)
		if e.get(t, member.Name, configMaps, ns, name) == nil {
			t.Fatalf("configmap %s/%s is not in the member after the apply", ns, name)
		}
		return actions(res)
	}
	first := apply("a", "cached")
	if reads := nsReads.Load(); reads != 1 {
		t.Errorf("first apply read the namespace %d times, want 1", reads)
	}
	if !strings.Contains(strings.Join(first, " "), string(ActionCreatedNamespace)) {
		t.Errorf("first apply = %v, want the namespace created", first)
	}
	second := apply("b", "cached")
	if reads := nsReads.Load(); reads != 1 {
		t.Errorf("second apply read the namespace again (%d reads in all), want it taken from the cache", reads)
	}
	if strings.Contains(strings.Join(second, " "), string(ActionCreatedNamespace)) {
		t.Errorf("second apply = %v, want no namespace created", second)
	}

	// The cache believes in a namespace the member does not have.
	ex.Namespaces.remember(member.Name, "gone")
	apply("c", "gone")
	if e.get(t, member.Name, namespaces, "", "gone") == nil {
		t.Errorf("namespace gone was not created after the cache was found wrong")
	}
}

func TestNamespaceCacheTTL(t *testing.T) {
	c := NewNamespaceCache(50 * time.Millisecond)
	c.remember("east", "a")
	if !c.known("east", "a") || c.known("west", "a") || c.known("east", "b") {
		t.Fatalf("known: want only east/a")
	}
	time.Sleep(60 * time.Millisecond)
	if c.known("east", "a") {
		t.Errorf("east/a is known after its TTL")
	}
	c.remember("east", "a")
	c.forget("east", "a")
	if c.known("east", "a") {
		t.Errorf("east/a is known after forget")
	}
	var none *NamespaceCache
	none.remember("east", "a")
	if none.known("east", "a") {
		t.Errorf("a nil cache knows a namespace")
	}
}

// TestRequestTimeout: with Executor.RequestTimeout, a member that holds
// requests fails the call within the timeout with a *RequestTimeoutError
// naming it and the cluster, and the call's other objects for that member are not tried.
func TestRequestTimeout(t *testing.T) {
	e := startEnv(t)
	member := e.fleet.Clusters[0]
	e.makeNamespace(t, "held")
	proxy := member.StallProxy(t, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/namespaces/held/") })
	cfg := &rest.Config{Host: proxy.URL, BearerToken: member.Token, TLSClientConfig: rest.TLSClientConfig{CAData: proxy.CAData}, QPS: 1000, Burst: 2000}
	const timeout = 500 * time.Millisecond
	ex := &Executor{Clusters: Targets{member.Name: newTarget(t, cfg)}, Fleet: testFleet, RequestTimeout: timeout, ObjectConcurrency: 1}
	begin := time.Now()
	res := ex.ApplyBatch(t.Context(), []ApplyRequest{
		applyReq(t, apitest.MakeTemplate("v1", "ConfigMap", "a", "held").Obj(), member.Name),
		applyReq(t, apitest.MakeTemplate("v1", "ConfigMap", "b", "held").Obj(), member.Name),
	})
	took := time.Since(begin)
	if took > 2*timeout+2*time.Second {
		t.Errorf("an apply to a stalled member took %v with a request timeout of %v", took, timeout)
	}
	var timedOut, skipped int
	for _, o := range res.Outcomes {
		var rte *RequestTimeoutError
		switch {
		case o.Action != ActionFailed:
			t.Errorf("outcome %s %s: %s, want Failed", o.Cluster, o.Object, o.Action)
		case strings.Contains(o.Err.Error(), "not attempted, the cluster is unreachable"):
			skipped++
		case errors.As(o.Err, &rte):
			timedOut++
			want := "to cluster " + member.Name + ": read the live object: no answer within the member request timeout 500ms"
			if rte.Timeout != timeout || !strings.Contains(o.Err.Error(), want) {
				t.Errorf("error %q, want it to contain %q", o.Err, want)
			}
		default:
			t.Errorf("outcome %s %s: %v, want the request timeout or not attempted", o.Cluster, o.Object, o.Err)
		}
	}
	if timedOut != 1 || skipped != 1 {
		t.Errorf("%d timed out, %d not attempted; want 1 and 1 (%s)", timedOut, skipped, summary(res))
	}
	if proxy.Seen() == 0 {
		t.Fatal("the proxy held no request; the test proves nothing")
	}
}

// countingTarget is a target of cfg whose requests are shown to see first.
func countingTarget(t *testing.T, cfg *rest.Config, see func(*http.Request)) Target {
	t.Helper()
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			see(r)
			return rt.RoundTrip(r)
		})
	}
	return newTarget(t, cfg)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
