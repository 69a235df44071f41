package fleetview

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"
)

// TestRequestsToAMemberReuseItsConnections sends several users' requests
// to one member and counts the TLS connections it accepts: one pool per
// member, shared by every user, since connections carry no identity and
// each request its own impersonation headers.
func TestRequestsToAMemberReuseItsConnections(t *testing.T) {
	var conns atomic.Int32
	var seen []string
	member := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Impersonate-User")+" "+r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, "{}")
	}))
	member.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	member.StartTLS()
	defer member.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: member.Certificate().Raw})
	target := Target{Config: &rest.Config{Host: member.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, ImpersonatorToken: "imp"}
	s := &Server{opts: Options{RequestTimeout: 5 * time.Second}}
	for _, name := range []string{"alice", "bob", "alice", "carol"} {
		rt, location, err := s.transport(target, &user.DefaultInfo{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, location.String()+"/api", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("member accepted %d connections for 4 requests, want 1 reused", got)
	}
	want := []string{"alice Bearer imp", "bob Bearer imp", "alice Bearer imp", "carol Bearer imp"}
	for i := range want {
		if i >= len(seen) || seen[i] != want[i] {
			t.Fatalf("member saw %q, want %q: each request must carry its own user", seen, want)
		}
	}

	// A changed address or trust is a new pool; the same one is the old.
	moved := target
	moved.ProxyURL = "http://proxy.example:3128"
	if poolKey(moved) == poolKey(target) {
		t.Error("a Cluster behind a proxy must not share the direct pool")
	}
	if poolKey(target) != poolKey(Target{Config: &rest.Config{Host: member.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, ImpersonatorToken: "other"}) {
		t.Error("the impersonator's token must not split pools: pools hold no credentials")
	}
}
