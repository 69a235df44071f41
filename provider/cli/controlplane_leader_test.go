//go:build linux

package cli

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const leaderDeadline = 90 * time.Second

// TestControlplaneLeaderElection runs two real `controlplane` processes
// against one host with --leader-elect: both answer /healthz and /readyz,
// exactly one holds the Lease and runs the reconcilers, and when it is
// killed the other takes the Lease over and propagates a new template.
func TestControlplaneLeaderElection(t *testing.T) {
	bin := buildBinary(t)
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	hub, memberClient := apiClient(t, host.RESTConfig()), apiClient(t, member.RESTConfig())

	procs := []*controlplaneProcess{
		startControlplane(t, bin, host.KubeconfigPath, "a"),
		startControlplane(t, bin, host.KubeconfigPath, "b"),
	}
	for _, p := range procs {
		for _, path := range []string{"/healthz", "/readyz"} {
			p.waitEndpoint(t, path)
		}
	}

	leaseKey := client.ObjectKey{Namespace: "kube-system", Name: "flotilla-controlplane"}
	var lease coordinationv1.Lease
	waitFor(t, "a lease holder", func() (bool, string) {
		if err := hub.Get(t.Context(), leaseKey, &lease); err != nil {
			return false, err.Error()
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", fmt.Sprintf("lease %+v", lease.Spec)
	})
	firstHolder := *lease.Spec.HolderIdentity
	var leader, standby *controlplaneProcess
	waitFor(t, "one process reports the lease", func() (bool, string) {
		a, b := procs[0].leads(), procs[1].leads()
		switch {
		case a && b:
			t.Fatalf("both processes acquired the lease:\n%s\n%s", procs[0].log(), procs[1].log())
		case a:
			leader, standby = procs[0], procs[1]
		case b:
			leader, standby = procs[1], procs[0]
		}
		return leader != nil, "neither log says so yet"
	})
	t.Logf("leader: process %s (pid %d), lease holder %s", leader.name, leader.cmd.Process.Pid, firstHolder)

	// The CRDs are installed by the processes themselves.
	registerMember(t, hub, member)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
`)
	testkit.MustCreate(t, hub, pp)
	createConfigMap(t, hub, "before")
	waitConfigMap(t, memberClient, "before")
	if standby.runsControllers() {
		t.Fatalf("the standby runs reconcilers:\n%s", standby.log())
	}
	if !leader.runsControllers() {
		t.Fatalf("the leader runs no reconcilers:\n%s", leader.log())
	}

	t.Log("the leader is killed")
	killed := time.Now()
	leader.kill(t)
	waitFor(t, "the standby takes the lease over", func() (bool, string) {
		if err := hub.Get(t.Context(), leaseKey, &lease); err != nil {
			return false, err.Error()
		}
		h := ""
		if lease.Spec.HolderIdentity != nil {
			h = *lease.Spec.HolderIdentity
		}
		return h != "" && h != firstHolder && standby.leads(), "holder " + h
	})
	takeover := time.Since(killed)
	createConfigMap(t, hub, "after")
	waitConfigMap(t, memberClient, "after")
	t.Logf("leader takeover: lease held by the standby %v after the kill, new template on the member %v after the kill (lease 3s, renew 2s, retry 500ms)",
		takeover.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond))
	standby.waitEndpoint(t, "/readyz")
}

// apiClient is a client of flotilla's and the built-in kinds for one apiserver.
func apiClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme, err := shared.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildBinary is the provider binary of this checkout, built once per test
// binary (testkit.SharedProvider; TestMain removes it): the tests only run
// it, and each link costs several CPU seconds, most of a minute on a
// loaded machine.
func buildBinary(t *testing.T) string {
	t.Helper()
	return testkit.SharedProvider(t, filepath.Join("..", ".."))
}

// controlplaneProcess is one running `controlplane` process.
type controlplaneProcess struct {
	name      string
	cmd       *exec.Cmd
	probeAddr string
	out       *syncBuffer
	exited    chan struct{}
}

// startControlplane starts the binary's controlplane over kubeconfig with
// a fast leader election in kube-system.
func startControlplane(t *testing.T, bin, kubeconfig, name string) *controlplaneProcess {
	t.Helper()
	return startControlplaneProcess(t, bin, name, "--kubeconfig", kubeconfig, "--fleet", "test",
		"--leader-elect", "--leader-election-namespace", "kube-system",
		"--leader-election-lease-duration", "3s", "--leader-election-renew-deadline", "2s", "--leader-election-retry-period", "500ms")
}

// startControlplaneProcess starts `controlplane` with args, its metrics off, its
// probes on a free address and a fast cluster probe, and kills it when the
// test ends, printing its log if the test failed.
func startControlplaneProcess(t *testing.T, bin, name string, args ...string) *controlplaneProcess {
	t.Helper()
	p := &controlplaneProcess{name: name, probeAddr: testkit.FreeAddr(t), out: &syncBuffer{}, exited: make(chan struct{})}
	args = append(append([]string{"controlplane"}, args...),
		"--metrics-bind-address", "0", "--health-probe-bind-address", p.probeAddr, "--cluster-probe-interval", "300ms")
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	// Killed with the test binary, should it die first.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("controlplane %s log:\n%s", p.name, p.log())
		}
	})
	return p
}

// kill sends SIGKILL to the process, by PID, and waits for it: a crash, so
// the lease is not released and must expire.
func (p *controlplaneProcess) kill(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Logf("kill controlplane %s: %v", p.name, err)
	}
	<-p.exited
}

func (p *controlplaneProcess) log() string { return p.out.String() }

// leads reports whether the process has logged that it acquired the lease.
func (p *controlplaneProcess) leads() bool {
	return strings.Contains(strings.ToLower(p.log()), "successfully acquired lease")
}

// runsControllers reports whether the process has started reconcilers,
// which controller-runtime does only once it leads.
func (p *controlplaneProcess) runsControllers() bool {
	return strings.Contains(p.log(), "Starting workers")
}

// waitEndpoint waits until the health endpoint at path answers 200.
func (p *controlplaneProcess) waitEndpoint(t *testing.T, path string) {
	t.Helper()
	url := "http://" + p.probeAddr + path
	waitFor(t, fmt.Sprintf("controlplane %s %s", p.name, path), func() (bool, string) {
		select {
		case <-p.exited:
			t.Fatalf("controlplane %s exited:\n%s", p.name, p.log())
		default:
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// registerMember stores the member's credentials and its Cluster on the host.
func registerMember(t *testing.T, hub client.Client, m *testenv.Cluster) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: m.Name}, Data: controllertest.TokenData(m)}
	cl := controllertest.ClusterObject(m.Name, m.Host, "flotilla-system")
	for _, obj := range []client.Object{ns, secret} {
		if err := hub.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	// The CRD is installed by whichever process starts first; wait for it.
	waitFor(t, "the Cluster CRD", func() (bool, string) {
		err := hub.Create(t.Context(), cl.DeepCopy())
		return err == nil, fmt.Sprint(err)
	})
}

func createConfigMap(t *testing.T, hub client.Client, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"k": name}}
	if err := hub.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
}

func waitConfigMap(t *testing.T, member client.Client, name string) {
	t.Helper()
	waitFor(t, "ConfigMap "+name+" on the member", func() (bool, string) {
		var cm corev1.ConfigMap
		err := member.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, &cm)
		return err == nil && cm.Data["k"] == name, fmt.Sprint(err)
	})
}

func waitFor(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	testkit.EventuallyEvery(t, 100*time.Millisecond, leaderDeadline, what, f)
}
