package terraform

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// The fault tests drive the real terraform binary with the provider running
// as its own process (dev_overrides, as scripts/bench-terraform.sh does), so
// that a member, the network to it or the provider process itself can fail
// while terraform apply runs. This file holds their harness.

// faultFleet is the fleet name the fault tests write into ownership labels.
const faultFleet = "fault"

// tfDriver runs terraform commands in one working directory against a
// provider binary built from this module.
type tfDriver struct {
	t   *testing.T
	dir string
	env []string
	tf  string
}

// newTFDriver builds the provider (once per test binary) and prepares
// a working directory whose CLI configuration points terraform at it.
func newTFDriver(t *testing.T) *tfDriver {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("fault tests run the real terraform; set TF_ACC=1")
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		// TF_ACC asks for the real terraform: its absence is a failure, not a skip.
		t.Fatalf("terraform is not on PATH: %v", err)
	}
	root := t.TempDir()
	// One build for the whole package (TestMain removes it): the binary is
	// only run, and its directory holds nothing else, so every driver's
	// dev_overrides can name it.
	bin := filepath.Dir(testkit.SharedProvider(t, filepath.Join("..", ".."))) // the module root, where main.go is
	rc := filepath.Join(root, "terraformrc")
	cfg := fmt.Sprintf("provider_installation {\n  dev_overrides { %q = %q }\n  direct {}\n}\n", providerAddressForTests, bin)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return &tfDriver{t: t, dir: dir, env: env, tf: tf}
}

// providerAddressForTests is the provider's registry address (main.go's).
const providerAddressForTests = "registry.terraform.io/flotilla-io/flotilla"

// write replaces the working directory's configuration.
func (d *tfDriver) write(config string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, "main.tf"), []byte(config), 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// command prepares a terraform command; its output goes to out.
func (d *tfDriver) command(ctx context.Context, out io.Writer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, d.tf, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = d.dir, d.env, out, out
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// startApply starts `terraform apply -auto-approve -no-color
// -parallelism=1` in the background, bounded by ten minutes and by the test,
// and returns that bound, the command and its combined output.
func (d *tfDriver) startApply(t *testing.T) (context.Context, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	out := &bytes.Buffer{}
	cmd := d.command(ctx, out, "apply", "-auto-approve", "-no-color", "-parallelism=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return ctx, cmd, out
}

// run runs terraform and returns its output and exit code.
func (d *tfDriver) run(args ...string) (string, int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := d.command(ctx, &out, args...).Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		d.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), code
}

// mustRun runs terraform and fails the test unless it exits 0.
func (d *tfDriver) mustRun(args ...string) string {
	d.t.Helper()
	out, code := d.run(args...)
	if code != 0 {
		d.t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// expectEmptyPlan fails the test unless a plan shows no changes.
func (d *tfDriver) expectEmptyPlan() {
	d.t.Helper()
	if out, code := d.run("plan", "-detailed-exitcode", "-no-color"); code != 0 {
		d.t.Fatalf("the follow-up plan is not empty (exit %d):\n%s", code, out)
	}
}

// recordedManifest is what the state says about one flotilla_manifest.
type recordedManifest struct {
	// Rendered lists the clusters whose object the state records as applied.
	Rendered []string
	// Applied lists the clusters private state says the object may exist in.
	Applied []string
	// Tainted is set when terraform will replace it.
	Tainted bool
}

// manifests reads the state file: the recorded clusters of every
// flotilla_manifest, by the template name (the object's name).
func (d *tfDriver) manifests() map[string]recordedManifest {
	d.t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]recordedManifest{}
	}
	if err != nil {
		d.t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Status     string `json:"status"`
				Private    string `json:"private"`
				Attributes struct {
					Manifest struct {
						Value struct {
							Metadata struct {
								Name string `json:"name"`
							} `json:"metadata"`
						} `json:"value"`
					} `json:"manifest"`
					Rendered map[string]string `json:"rendered"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		d.t.Fatalf("read state: %v", err)
	}
	out := map[string]recordedManifest{}
	for _, r := range state.Resources {
		if r.Type != "flotilla_manifest" {
			continue
		}
		for _, in := range r.Instances {
			rec := recordedManifest{Rendered: sortedKeys(in.Attributes.Rendered), Tainted: in.Status == "tainted"}
			rec.Applied = privateApplied(d.t, in.Private)
			out[in.Attributes.Manifest.Value.Metadata.Name] = rec
		}
	}
	return out
}

// privateApplied decodes flotilla_manifest's private state (see
// manifestPrivate) from the state file's private field.
func privateApplied(t *testing.T, private string) []string {
	t.Helper()
	if private == "" {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(private)
	if err != nil {
		t.Fatalf("private state: %v", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("private state %s: %v", raw, err)
	}
	// The framework keeps each key's value as a JSON string of base64.
	var p manifestPrivate
	if v, ok := keys[privateKey]; ok {
		var enc []byte
		if err := json.Unmarshal(v, &enc); err != nil {
			t.Fatalf("private state %s: %v", v, err)
		}
		if err := json.Unmarshal(enc, &p); err != nil {
			t.Fatalf("private state %s: %v", enc, err)
		}
	}
	return p.Applied
}

// faultMember is one member as the fault tests see it.
type faultMember struct {
	name    string
	env     *testenv.Cluster
	host    string // what the configuration connects to: the apiserver, or a proxy in front of it
	clients kubernetes.Interface
}

// startFaultMembers starts apiserver-only members named m1, m2, ….
func startFaultMembers(t *testing.T, n int) []*faultMember {
	t.Helper()
	return startFaultMembersOf(t, testenv.Start(t, testenv.Options{Clusters: n, Mode: testenv.APIServerOnly}))
}

// startFaultMembersOf names the members of env m1, m2, ….
func startFaultMembersOf(t *testing.T, env *testenv.Fleet) []*faultMember {
	t.Helper()
	out := make([]*faultMember, len(env.Clusters))
	for i, c := range env.Clusters {
		cs := c.Clientset(t)
		out[i] = &faultMember{name: fmt.Sprintf("m%d", i+1), env: c, host: c.Host, clients: cs}
	}
	return out
}

// faultClustersHCL declares the provider, writing to members one at a time
// (apply_parallelism) when serial is set, and one flotilla_cluster per member.
func faultClustersHCL(ms []*faultMember, serial bool) string {
	var b strings.Builder
	parallelism := ""
	if serial {
		parallelism = "apply_parallelism = 1"
	}
	b.WriteString(requiredProvidersHCL + providerHCL(faultFleet, parallelism))
	var refs []string
	for _, m := range ms {
		b.WriteString(tokenClusterHCL(m.name, m.host, m.env.Token, m.env.CAData, ""))
		refs = append(refs, "flotilla_cluster."+m.name)
	}
	fmt.Fprintf(&b, "locals {\n  clusters = [%s]\n}\n", strings.Join(refs, ", "))
	return b.String()
}

// configMaps lists, by name, the data["v"] of the ConfigMaps this fleet owns
// in a member.
func (m *faultMember) configMaps(t *testing.T) (map[string]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	list, err := m.clients.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "flotilla.io/fleet=" + faultFleet})
	if err != nil {
		return nil, fmt.Errorf("list ConfigMaps in %s: %w", m.name, err)
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Name] = cm.Data["v"]
	}
	return out, nil
}

// mustConfigMaps is configMaps, failing the test on error.
func (m *faultMember) mustConfigMaps(t *testing.T) map[string]string {
	t.Helper()
	out, err := m.configMaps(t)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitUntil polls cond every 50 ms until it holds or ctx ends.
func waitUntil(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkNoOrphans lists every member and checks that each holds exactly the
// wanted ConfigMaps (name → data["v"]) of this fleet, and nothing else.
func checkNoOrphans(t *testing.T, ms []*faultMember, want map[string]string) {
	t.Helper()
	for _, m := range ms {
		got := m.mustConfigMaps(t)
		for name, v := range want {
			if got[name] != v {
				t.Errorf("%s: ConfigMap %s has v=%q, want %q", m.name, name, got[name], v)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s: ConfigMap %s is an orphan: it exists but no manifest in the configuration places it", m.name, name)
			}
		}
	}
}

// childProcess finds the process called (a prefix of) comm whose parent is
// ppid, from /proc.
func childProcess(ppid int, comm string) (int, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after the last ')'.
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 {
			continue
		}
		parent, _ := strconv.Atoi(fields[1])
		if parent == ppid && strings.HasPrefix(comm, s[open+1:closing]) {
			return pid, true
		}
	}
	return 0, false
}

// killChild SIGKILLs the provider process terraform (pid) started.
func killChild(t *testing.T, pid int) bool {
	t.Helper()
	child, ok := childProcess(pid, "terraform-provider-flotilla")
	if !ok {
		return false
	}
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Logf("kill provider process %d: %v", child, err)
		return false
	}
	t.Logf("killed the provider process %d", child)
	return true
}

// stallProxy is a TCP proxy on loopback in front of a member. Stalled, it
// stops moving bytes in both directions on every connection, open or new,
// as a member that no longer answers does; released, it drops the stalled
// connections so that clients dial again.
type stallProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	stalled bool
	release chan struct{}
	conns   []net.Conn
}

// startStallProxy listens on a free loopback port and forwards to target
// (host:port) until the test ends.
func startStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, release: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.pass()
	})
	return p
}

// addr is the proxy's host:port.
func (p *stallProxy) addr() string { return p.ln.Addr().String() }

// stall stops all traffic.
func (p *stallProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// pass lets traffic flow again, dropping the connections that stalled.
func (p *stallProxy) pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stalled {
		return
	}
	p.stalled = false
	close(p.release)
	p.release = make(chan struct{})
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// gate blocks while the proxy is stalled. It returns false when the
// connection must be dropped (the stall was released meanwhile).
func (p *stallProxy) gate(conns ...net.Conn) bool {
	p.mu.Lock()
	if !p.stalled {
		p.mu.Unlock()
		return true
	}
	release := p.release
	p.conns = append(p.conns, conns...)
	p.mu.Unlock()
	<-release
	return false
}

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *stallProxy) handle(c net.Conn) {
	if !p.gate(c) {
		_ = c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	pipe := func(dst, src net.Conn) {
		defer func() { _ = dst.Close(); _ = src.Close() }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if !p.gate(c, up) {
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(up, c)
	pipe(c, up)
}

// hostPort is the host:port of an https:// URL.
func hostPort(t *testing.T, url string) string {
	t.Helper()
	hp, ok := strings.CutPrefix(url, "https://")
	if !ok {
		t.Fatalf("not an https URL: %s", url)
	}
	return hp
}

// sameSet reports whether two lists hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
