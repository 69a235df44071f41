package terraform

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A member whose apiserver is down must cost a Terraform run one probe per
// provider process (Terraform starts one for a plan, two for an apply: its
// plan and its apply), not one wait per resource and retry. The test stands
// a TCP gate in front of one member's apiserver and counts the connections
// it accepts during each command, so it does not depend on the machine's
// speed; the durations are logged for the record.

// gateMode is what the gate does with a connection.
type gateMode int32

const (
	// gateForward passes the connection to the member's apiserver.
	gateForward gateMode = iota
	// gateClose accepts and closes it at once, as a load balancer in
	// front of a stopped apiserver does.
	gateClose
	// gateHold accepts it and never answers, as a frozen apiserver or a
	// black-holed network does.
	gateHold
)

// tcpGate listens on loopback in front of a member and counts connects.
type tcpGate struct {
	ln       net.Listener
	target   string
	mode     atomic.Int32
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

// startTCPGate starts a gate in front of host (https://127.0.0.1:port); it
// stops, closing every connection it holds, at the end of the test. The
// member's serving certificate names 127.0.0.1, so TLS through the gate
// checks as it does without it.
func startTCPGate(t *testing.T, host string) *tcpGate {
	t.Helper()
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &tcpGate{ln: ln, target: u.Host}
	t.Cleanup(func() {
		_ = ln.Close()
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, c := range g.conns {
			_ = c.Close()
		}
	})
	go g.serve()
	return g
}

func (g *tcpGate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.accepted.Add(1)
		switch gateMode(g.mode.Load()) {
		case gateClose:
			_ = c.Close()
		case gateForward:
			g.keep(c)
			go g.forward(c)
		default: // gateHold
			g.keep(c)
		}
	}
}

func (g *tcpGate) keep(c net.Conn) {
	g.mu.Lock()
	g.conns = append(g.conns, c)
	g.mu.Unlock()
}

func (g *tcpGate) forward(c net.Conn) {
	up, err := net.Dial("tcp", g.target)
	if err != nil {
		_ = c.Close()
		return
	}
	g.keep(up)
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

func (g *tcpGate) url() string { return "https://" + g.ln.Addr().String() }

// downRuns is how many times each timed command runs (FLOTILLA_DOWN_RUNS,
// default 1); the median is logged. The assertions hold on every run.
func downRuns() int {
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_DOWN_RUNS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// TestDownMemberProbedOncePerProcess: with one of three members down,
// eight manifests cost the run one connection to it per provider process, and
// one that never completes the handshake costs member_connect_timeout:
// a plan warns naming it and exits 0, refreshing the others; an apply fails
// naming it and each manifest's object, and applies the others. It was three
// connections a process (one probe, retried after a second on io.EOF until
// its deadline) for a member that closes each connection.
func TestDownMemberProbedOncePerProcess(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembers(t, 3)
	gate := startTCPGate(t, ms[1].host)
	ms[1].host = gate.url()
	down := ms[1]
	const n = 8
	config := func(version string) string {
		var b strings.Builder
		b.WriteString(faultClustersHCL(ms, false))
		b.WriteString(`
resource "flotilla_propagation_policy" "all" {
  name               = "all"
  namespace          = "default"
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap" }]
}
`)
		for i := 1; i <= n; i++ {
			b.WriteString(configMapHCL(fmt.Sprintf("cm%d", i), fmt.Sprintf("cm-%d", i), version, "all", ""))
		}
		return b.String()
	}
	d.write(config("1"))
	d.mustRun("apply", "-auto-approve", "-no-color")

	// timed runs terraform downRuns() times, logs the median duration and
	// returns the first output and exit code and the most connections the
	// gate accepted during one run.
	timed := func(label string, prepare func(run int), args ...string) (string, int, int64) {
		t.Helper()
		var took []time.Duration
		var first string
		var code int
		var most int64
		for i := range downRuns() {
			if prepare != nil {
				prepare(i)
			}
			before := gate.accepted.Load()
			start := time.Now()
			out, c := d.run(args...)
			took = append(took, time.Since(start))
			if i == 0 {
				first, code = out, c
			}
			most = max(most, gate.accepted.Load()-before)
		}
		slices.Sort(took)
		t.Logf("%s: median %s of %d (%v), at most %d connections to %s", label,
			took[len(took)/2].Round(10*time.Millisecond), len(took), took, most, down.name)
		return first, code, most
	}
	timed("plan, every member up", nil, "plan", "-no-color")
	// Each apply changes every manifest, so every run writes to each member.
	version := 1
	bump := func(int) { version++; d.write(config(strconv.Itoa(version))) }
	timed("apply, every member up", bump, "apply", "-auto-approve", "-no-color")

	warned := func(t *testing.T, out string) {
		t.Helper()
		for _, want := range []string{"Cluster " + down.name + " is not reachable", "from cluster " + down.name} {
			if !strings.Contains(out, want) {
				t.Errorf("the plan does not say %q", want)
			}
		}
	}
	t.Run("closes every connection", func(t *testing.T) {
		gate.mode.Store(int32(gateClose))
		out, code, conns := timed("plan, "+down.name+" closing connections", nil, "plan", "-no-color")
		if code != 0 {
			t.Fatalf("terraform plan exited %d with a member down:\n%s", code, out)
		}
		warned(t, out)
		if conns != 1 {
			t.Errorf("one plan of %d manifests opened %d connections to %s, want 1 (one probe)", n, conns, down.name)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		gate.mode.Store(int32(gateHold))
		out, code, conns := timed("plan, "+down.name+" never answering", nil, "plan", "-no-color")
		if code != 0 {
			t.Fatalf("terraform plan exited %d with a member down:\n%s", code, out)
		}
		warned(t, out)
		// The handshake never completes: member_connect_timeout (1.5s) ends
		// the probe, not member_probe_timeout (3s).
		if !strings.Contains(out, "no connection within 1.5s") {
			t.Errorf("the plan does not say the member made no connection within member_connect_timeout:\n%s", out)
		}
		if conns != 1 {
			t.Errorf("one plan of %d manifests opened %d connections to %s, want 1 (one probe)", n, conns, down.name)
		}
		out, code, conns = timed("apply, "+down.name+" never answering", bump, "apply", "-auto-approve", "-no-color")
		if code == 0 {
			t.Fatalf("terraform apply succeeded with %s down:\n%s", down.name, out)
		}
		if conns > 2 {
			t.Errorf("one apply opened %d connections to %s, want at most 2 (one probe in each of its plan and apply processes)", conns, down.name)
		}
	})
	t.Run("apply", func(t *testing.T) {
		gate.mode.Store(int32(gateClose))
		out, code, conns := timed("apply, "+down.name+" closing connections", bump, "apply", "-auto-approve", "-no-color")
		if code == 0 {
			t.Fatalf("terraform apply succeeded with %s down:\n%s", down.name, out)
		}
		if conns > 2 {
			t.Errorf("one apply opened %d connections to %s, want at most 2 (one probe in each of its plan and apply processes)", conns, down.name)
		}
		for i := 1; i <= n; i++ {
			if !strings.Contains(out, fmt.Sprintf("ConfigMap default/cm-%d failed in some clusters", i)) {
				t.Errorf("the apply's errors do not name ConfigMap default/cm-%d", i)
			}
		}
		if !strings.Contains(out, down.name+": Failed") || !strings.Contains(out, "cluster "+down.name+" is not connected") {
			t.Errorf("the apply's errors do not name cluster %s as not connected:\n%s", down.name, out)
		}
		for _, up := range []*faultMember{ms[0], ms[2]} {
			if got, want := up.mustConfigMaps(t), wantConfigMaps(n, strconv.Itoa(version)); !maps.Equal(got, want) {
				t.Errorf("cluster %s holds %v, want %v", up.name, got, want)
			}
		}
	})
}
