package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

type upFlags struct {
	members            int
	bin                string
	timeout            time.Duration
	extra              []string
	backend, kindImage string
	apiGroups          string
}

// localTimings make a member that goes down fail over within seconds rather
// than Karmada's minutes, so the demo shows it; flags after -- override them.
var localTimings = []string{
	"--cluster-probe-interval=1s",
	"--cluster-failure-threshold=5s",
	"--cluster-success-threshold=5s",
	"--no-execute-after=5s",
	"--graceful-eviction-timeout=1m",
}

func cmdUp(dir string, flags upFlags, out io.Writer) error {
	bin, err := exec.LookPath(flags.bin)
	if err != nil {
		return fmt.Errorf("-bin: %w (run `make build` first)", err)
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	st, err := readState(dir)
	switch {
	case err == nil:
		if st.backend() != flags.backend {
			return fmt.Errorf("a %s control plane is up in %s: run `localup down` (make controlplane-down) before starting a %s one", st.backend(), dir, flags.backend)
		}
		running, total, err := st.countRunning()
		if err != nil {
			return err
		}
		if running == total && len(st.MemberNames) > 0 {
			fmt.Fprintf(out, "localup: already up in %s; nothing to do (run `localup down` first to change it)\n", dir)
			printTry(out, dir, st)
			return nil
		}
		fmt.Fprintf(out, "localup: %d of %d recorded processes and kind clusters in %s are gone, or an earlier up did not finish; stopping the rest and starting afresh\n", total-running, total, dir)
		if err := st.stop(); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := testenv.ClaimDir(dir, markerFile, "localup"); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, flags.timeout)
	defer cancel()

	begin := time.Now()
	st = &state{Dir: dir, Started: begin.UTC(), Backend: flags.backend}
	logf := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	var host *testenv.Cluster
	var members []*testenv.Cluster
	if flags.backend == backendKind {
		host, members, err = st.startKind(ctx, flags, logf)
	} else {
		host, members, err = st.startProcesses(ctx, flags.members, logf)
	}
	if err != nil {
		return err
	}
	for _, c := range members {
		st.MemberNames = append(st.MemberNames, c.Name)
	}
	if err := testenv.WriteState(filepath.Join(dir, stateFile), st); err != nil {
		return errors.Join(err, st.stop())
	}
	extra := withWebhookClientCA(flags.extra, host.WebhookClientCAFile)
	proxy := false
	if flags.backend != backendKind && controlplaneHasFlag(ctx, bin, "cluster-proxy-bind-address") {
		proxyFlags, err := registerClusterProxy(ctx, dir, host, logf)
		if err != nil {
			return errors.Join(err, st.stop())
		}
		proxy, extra = len(proxyFlags) > 0, append(proxyFlags, extra...)
	}
	if err := st.startControlplane(ctx, bin, host.KubeconfigPath, extra, logf); err != nil {
		return errors.Join(err, st.stop())
	}
	kc := filepath.Join(dir, kubeconfig)
	contexts := append([]testenv.NamedCluster{{Context: hostName, Cluster: host}}, testenv.ClusterContexts(members)...)
	if err := errors.Join(testenv.WriteState(filepath.Join(dir, stateFile), st), testenv.WriteContexts(kc, contexts)); err != nil {
		return errors.Join(err, st.stop())
	}
	if err := registerMembers(ctx, host, members, proxy, logf); err != nil {
		return errors.Join(fmt.Errorf("%w (control plane log: %s)", err, st.Controlplane.Log), st.stop())
	}
	fmt.Fprintf(out, "localup: host, control plane and %d member(s) up in %s\n", len(members), time.Since(begin).Round(100*time.Millisecond))
	printTry(out, dir, st)
	return nil
}

// startProcesses starts the host (an apiserver alone, like karmada-apiserver:
// nothing reconciles the templates stored there) and the members (full
// clusters whose fake nodes run pods) side by side, detached, and records
// their processes in st.
func (st *state) startProcesses(ctx context.Context, members int, logf func(string, ...any)) (host *testenv.Cluster, fleet []*testenv.Cluster, err error) {
	opts := []testenv.Options{
		// The host aggregates, so the cluster proxy's APIService can be served.
		{Clusters: 1, NamePrefix: hostName, Mode: testenv.APIServerOnly, Dir: filepath.Join(st.Dir, hostName), Aggregation: true},
		{Clusters: members, Mode: testenv.Full, Dir: filepath.Join(st.Dir, "members")},
	}
	fleets := make([]*testenv.Fleet, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		o.Detach, o.Logf = true, logf
		wg.Go(func() { fleets[i], errs[i] = testenv.StartFleet(ctx, o) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, f := range fleets {
			if f != nil {
				err = errors.Join(err, f.Stop())
			}
		}
		return nil, nil, err
	}
	st.Host, st.Members = fleets[0].Processes(), fleets[1].Processes()
	return fleets[0].Clusters[0], fleets[1].Clusters, nil
}

// withWebhookClientCA adds --webhook-client-ca naming the host's webhook
// client CA when the control plane's extra flags turn the webhook on
// (--webhook-url) and say nothing of its client authentication: the
// process host presents that CA's certificate to webhooks, and the
// webhook refuses to start without a client CA.
func withWebhookClientCA(extra []string, caFile string) []string {
	url := false
	for _, a := range extra {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "webhook-url":
			url = true
		case "webhook-client-ca", "webhook-client-auth":
			return extra
		}
	}
	if !url || caFile == "" {
		return extra
	}
	return append(slices.Clone(extra), "--webhook-client-ca="+caFile)
}

// startControlplane starts `bin controlplane` against the host in its own
// session, so it outlives localup, and waits until its /readyz answers.
func (st *state) startControlplane(ctx context.Context, bin, hostKubeconfig string, extra []string, logf func(string, ...any)) error {
	probe, err := freeAddr()
	if err != nil {
		return err
	}
	args := append([]string{"controlplane", "--kubeconfig", hostKubeconfig,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=" + probe}, localTimings...)
	args = append(args, extra...)
	logPath := filepath.Join(st.Dir, "controlplane.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	st.Controlplane = &testenv.ProcessInfo{Name: "controlplane", PID: cmd.Process.Pid, Cmdline: cmd.Args, Log: logPath}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	url := "http://" + probe + "/readyz"
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("control plane exited before it was ready (%v); log: %s", err, logPath)
		case <-ctx.Done():
			return fmt.Errorf("control plane not ready at %s: %w; log: %s", url, ctx.Err(), logPath)
		case <-time.After(200 * time.Millisecond):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				logf("localup: control plane (pid %d) ready; log %s", cmd.Process.Pid, logPath)
				return nil
			}
		}
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func printTry(out io.Writer, dir string, st *state) {
	kc := filepath.Join(dir, kubeconfig)
	fmt.Fprintf(out, "  kubeconfig:    %s (contexts %s, %s … %s)\n", kc, hostName, st.MemberNames[0], st.MemberNames[len(st.MemberNames)-1])
	if st.Controlplane != nil {
		fmt.Fprintf(out, "  control plane: pid %d, log %s\n", st.Controlplane.PID, st.Controlplane.Log)
	}
	env, vars := "", ""
	if dir != defaultDir() {
		env, vars = "CONTROLPLANE_DIR="+dir+" ", " CONTROLPLANE_DIR="+dir
	}
	fmt.Fprintf(out, `  try:
    export KUBECONFIG=%s
    kubectl --context %s get clusters.%s
    %sscripts/controlplane-demo.sh  # a Deployment propagated by a PropagationPolicy, then failover as a member stops
    make controlplane-down%s
`, kc, hostName, clusterv1.GroupVersion.Group, env, vars)
}
