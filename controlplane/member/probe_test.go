package member

import (
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestProbeAnswers checks how Probe reads each answer of the health
// endpoints. A real apiserver cannot be made to lack /readyz or to fail its
// checks on demand, so this test serves the two endpoints itself over TLS;
// everything else is the real client stack.
func TestProbeAnswers(t *testing.T) {
	t.Parallel()
	type answer struct {
		code int
		body string
	}
	tests := []struct {
		name          string
		readyz        answer
		healthz       answer
		want          error
		wantMsg       string
		wantEndpoints []string
	}{
		{
			name:          "ready",
			readyz:        answer{200, "ok"},
			wantEndpoints: []string{"/readyz"},
		},
		{
			name:          "old apiserver without /readyz",
			readyz:        answer{404, "not found"},
			healthz:       answer{200, "ok"},
			wantEndpoints: []string{"/readyz", "/healthz"},
		},
		{
			name:          "/readyz forbidden, /healthz allowed",
			readyz:        answer{403, "forbidden"},
			healthz:       answer{200, "ok"},
			wantEndpoints: []string{"/readyz", "/healthz"},
		},
		{
			name:          "both forbidden",
			readyz:        answer{403, "forbidden"},
			healthz:       answer{403, "forbidden"},
			want:          ErrUnauthorized,
			wantMsg:       "cluster east is refusing flotilla's credentials: /readyz and /healthz answered 403 Forbidden",
			wantEndpoints: []string{"/readyz", "/healthz"},
		},
		{
			name:          "credentials rejected",
			readyz:        answer{401, "Unauthorized"},
			want:          ErrUnauthorized,
			wantMsg:       "cluster east is refusing flotilla's credentials: /readyz answered 401 Unauthorized",
			wantEndpoints: []string{"/readyz"},
		},
		{
			name:          "failing checks",
			readyz:        answer{500, "[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n"},
			want:          ErrNotReady,
			wantMsg:       "cluster east is not ready: /readyz answered 500: [-]etcd failed: reason withheld; [-]informer-sync failed: reason withheld",
			wantEndpoints: []string{"/readyz"},
		},
		{
			name:          "unhealthy old apiserver",
			readyz:        answer{404, "not found"},
			healthz:       answer{503, "shutting down"},
			want:          ErrNotReady,
			wantMsg:       "cluster east is not ready: /healthz answered 503",
			wantEndpoints: []string{"/readyz", "/healthz"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			endpoints := make(chan string, 4)
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				endpoints <- r.URL.Path
				a := map[string]answer{"/readyz": tt.readyz, "/healthz": tt.healthz}[r.URL.Path]
				if a.code == 0 {
					a = answer{404, "not found"}
				}
				if r.Header.Get("Authorization") != "Bearer "+secretToken {
					a = answer{401, "Unauthorized"}
				}
				w.WriteHeader(a.code)
				_, _ = w.Write([]byte(a.body))
			}))
			defer srv.Close()
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			c := mustGet(t, "east", Connection{Host: srv.URL, Token: secretToken, ClusterCACertificate: ca})
			err := c.Probe(t.Context())
			close(endpoints)
			var got []string
			for e := range endpoints {
				got = append(got, e)
			}
			if diff := cmp.Diff(tt.wantEndpoints, got); diff != "" {
				t.Errorf("endpoints asked (-want +got):\n%s", diff)
			}
			if tt.want == nil {
				if err != nil {
					t.Errorf("Probe = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Probe = %v, want %v", err, tt.want)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("Probe = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

// TestProbeTimeout: a member that accepts connections but never answers is
// not connected once the configured timeout passes.
func TestProbeTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go holdConnections(l)
	cache := NewCache(CacheOptions{ProbeTimeout: 300 * time.Millisecond})
	c, err := cache.Get(t.Context(), "east", Connection{Host: l.Addr().String(), Token: secretToken, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	err = c.Probe(t.Context())
	took := time.Since(begin)
	if !errors.Is(err, api.ErrNotConnected) {
		t.Fatalf("Probe = %v, want api.ErrNotConnected", err)
	}
	if want := "cluster east is not connected: no answer within 300ms"; err.Error() != want {
		t.Errorf("Probe = %q, want %q", err, want)
	}
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Errorf("Probe took %s, want about the 300ms timeout", took)
	}
	if got := NewCache(CacheOptions{}).opts.ProbeTimeout; got != 5*time.Second {
		t.Errorf("default probe timeout = %s, want 5s", got)
	}
}

// TestProbeClosedConnectionAskedOnce: a member whose every connection is
// accepted and closed at once (a stopped apiserver behind a load balancer)
// is not connected after one connection, not after client-go's retries of a
// GET that met io.EOF, each a second apart until the probe's deadline. The
// count of connections is the assertion, so the test does not depend on
// the machine's speed.
func TestProbeClosedConnectionAskedOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int64
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = conn.Close()
		}
	}()
	cache := NewCache(CacheOptions{ProbeTimeout: 10 * time.Second})
	c, err := cache.Get(t.Context(), "east", Connection{Host: l.Addr().String(), Token: secretToken, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Probe(t.Context())
	if !errors.Is(err, api.ErrNotConnected) {
		t.Fatalf("Probe = %v, want api.ErrNotConnected", err)
	}
	if !strings.HasPrefix(err.Error(), "cluster east is not connected: ") {
		t.Errorf("Probe = %q, want it to name cluster east as not connected", err)
	}
	if got := accepted.Load(); got != 1 {
		t.Errorf("the probe opened %d connections to a member that closes each at once, want 1", got)
	}
}

// TestProbeConnectTimeout: with a connect timeout, a member whose port
// accepts but never completes the TLS handshake (a frozen apiserver) is not
// connected once that timeout passes, and the error says which deadline it
// missed; a member that is connected but slow to answer keeps the whole
// probe timeout and is ready.
func TestProbeConnectTimeout(t *testing.T) {
	t.Parallel()
	cache := NewCache(CacheOptions{ProbeTimeout: 20 * time.Second, ConnectTimeout: 300 * time.Millisecond})

	t.Run("never connects", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go holdConnections(l)
		c, err := cache.Get(t.Context(), "east", Connection{Host: l.Addr().String(), Token: secretToken, Insecure: true})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Probe(t.Context())
		if !errors.Is(err, api.ErrNotConnected) {
			t.Fatalf("Probe = %v, want api.ErrNotConnected", err)
		}
		if want := "cluster east is not connected: no connection within 300ms"; err.Error() != want {
			t.Errorf("Probe = %q, want %q", err, want)
		}
	})

	t.Run("connects, answers slowly", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second) // more than the connect timeout, well within the probe's
			_, _ = w.Write([]byte("ok"))
		}))
		defer srv.Close()
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		c, err := cache.Get(t.Context(), "west", Connection{Host: srv.URL, Token: secretToken, ClusterCACertificate: ca})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Probe(t.Context()); err != nil {
			t.Errorf("Probe of a member that answers after 1s = %v, want ready", err)
		}
	})
}

// holdConnections accepts every connection on l and never answers; they
// are closed when l is.
func holdConnections(l net.Listener) {
	var held []net.Conn
	for {
		conn, err := l.Accept()
		if err != nil {
			for _, c := range held {
				_ = c.Close()
			}
			return
		}
		held = append(held, conn)
	}
}
