package execution

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// stopAfter is a transport that stops a member's apiserver right after the
// n-th PATCH (an apply) got its response, so the member goes away in the
// middle of a batch at a known point.
type stopAfter struct {
	next    http.RoundTripper
	cluster *testenv.Cluster

	mu      sync.Mutex
	patches int
	n       int
}

func (s *stopAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPatch {
		return resp, err
	}
	// Read the body before the server goes, so this response arrives whole.
	body, readErr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if readErr != nil {
		return nil, readErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.patches++; s.patches == s.n {
		s.cluster.StopAPIServer()
	}
	return resp, nil
}

func testOutage(t *testing.T, e *env) {
	e.makeNamespace(t, "outage")
	const objects, survive = 12, 3
	var reqs []ApplyRequest
	var names []string
	for i := range objects {
		name := fmt.Sprintf("cm-%02d", i)
		names = append(names, name)
		reqs = append(reqs, applyReq(t, apitest.MakeConfigMap(name, "outage").Data("i", name).Obj(), e.names...))
	}

	member2 := e.fleet.Cluster("member2")
	cfg := member2.RESTConfig()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return &stopAfter{next: rt, cluster: member2, n: survive}
	}
	targets := Targets{"member1": e.targets["member1"], "member2": newTarget(t, cfg), "member3": e.targets["member3"]}
	// One object at a time per cluster, so the cut falls after exactly
	// `survive` applies in member2.
	ex := &Executor{Clusters: targets, Fleet: testFleet, ObjectConcurrency: 1}
	res := ex.ApplyBatch(t.Context(), reqs)

	count := map[string]map[Action]int{}
	for _, o := range res.Outcomes {
		if count[o.Cluster] == nil {
			count[o.Cluster] = map[Action]int{}
		}
		count[o.Cluster][o.Action]++
		if o.Action == ActionFailed && !strings.Contains(o.Err.Error(), "to cluster member2: ") {
			t.Errorf("failure does not name the cluster: %v", o.Err)
		}
	}
	want := map[string]map[Action]int{
		"member1": {ActionApplied: objects},
		"member2": {ActionApplied: survive, ActionFailed: objects - survive},
		"member3": {ActionApplied: objects},
	}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Fatalf("outcomes per cluster (-want +got):\n%s%s", diff, summary(res))
	}
	t.Logf("first failure in member2: %v", res.Cluster("member2")[survive].Err)
	t.Logf("a later one: %v", res.Cluster("member2")[objects-1].Err)

	if err := member2.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The retry converges: member2 gets the rest, nothing else is written,
	// and every member holds exactly the batch's objects.
	res = e.executor().ApplyBatch(t.Context(), reqs)
	mustSucceed(t, res)
	changed := map[string]int{}
	for _, o := range res.Outcomes {
		if o.Changed {
			changed[o.Cluster]++
		}
	}
	if diff := cmp.Diff(map[string]int{"member2": objects - survive}, changed); diff != "" {
		t.Errorf("objects the retry wrote per cluster (-want +got):\n%s", diff)
	}
	for _, c := range e.names {
		if diff := cmp.Diff(names, e.listNames(t, c, configMaps, "outage")); diff != "" {
			t.Errorf("%s: ConfigMaps (-want +got):\n%s", c, diff)
		}
	}
}
