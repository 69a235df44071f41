// Command fleet starts and stops a local fleet of real member clusters for
// development and demos, using internal/testenv with detached processes.
//
//	go run ./internal/testenv/cmd/fleet up -n 3      # start member1..member3
//	kubectl --kubeconfig ~/.cache/flotilla/fleet/kubeconfig --context member2 get nodes
//	go run ./internal/testenv/cmd/fleet status
//	go run ./internal/testenv/cmd/fleet down         # stop exactly those processes
//	go run ./internal/testenv/cmd/fleet up -backend kind  # the members as kind clusters (Docker)
//
// up returns once every cluster is ready. It records the PIDs in a state file,
// and down signals only those PIDs, and only while each still runs the
// command line recorded for it. With -backend kind it records the kind
// clusters it makes, before making them, and down deletes exactly those.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv/kind"
)

const (
	markerFile = ".flotilla-fleet" // proves a directory is ours to empty and remove
	stateFile  = "state.json"
	kubeconfig = "kubeconfig"
	stopGrace  = 5 * time.Second
)

// state is what up leaves behind for status and down.
type state struct {
	Version   string                `json:"version"`
	Mode      string                `json:"mode"`
	Started   time.Time             `json:"started"`
	Clusters  []clusterState        `json:"clusters"`
	Processes []testenv.ProcessInfo `json:"processes"`
	// Backend is backendProcess or backendKind; empty (a state written
	// before kind was supported) means backendProcess.
	Backend string `json:"backend,omitempty"`
	// KindClusters are the kind clusters up made for a kind fleet.
	KindClusters []string `json:"kindClusters,omitempty"`
}

const (
	backendProcess = "process"
	backendKind    = "kind"
)

func (st *state) backend() string {
	if st.Backend == "" {
		return backendProcess
	}
	return st.Backend
}

type clusterState struct {
	Name string `json:"name"`
	Host string `json:"host"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "fleet: %v\n", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  fleet up     [-n 3] [-dir DIR] [-mode full|apiserver-only] [-cpu 32] [-memory 256Gi] [-pods 110] [-labels k=v,...]
  fleet up     -backend kind [-n 3] [-dir DIR] [-labels k=v,...] [-kind-image IMAGE]
  fleet status [-dir DIR]
  fleet down   [-dir DIR]
DIR defaults to $HOME/.cache/flotilla/fleet. -backend process (the default)
runs each member as local processes; -backend kind makes each a kind cluster
and needs a running Docker engine.
`)
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		usage(os.Stderr)
		return errors.New("missing subcommand")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("fleet "+cmd, flag.ContinueOnError)
	fs.Usage = func() { usage(fs.Output()) }
	dir := fs.String("dir", defaultDir(), "fleet directory")
	var up upFlags
	switch cmd {
	case "up":
		fs.IntVar(&up.n, "n", 3, "number of member clusters")
		fs.StringVar(&up.mode, "mode", "full", "full or apiserver-only")
		fs.StringVar(&up.cpu, "cpu", "32", "cpu capacity of each fake node")
		fs.StringVar(&up.memory, "memory", "256Gi", "memory capacity of each fake node")
		fs.StringVar(&up.pods, "pods", "110", "pod capacity of each fake node")
		fs.StringVar(&up.labels, "labels", "", "extra node labels, k=v,k=v")
		fs.StringVar(&up.backend, "backend", backendProcess, "process (local processes) or kind (kind clusters, needs Docker)")
		fs.StringVar(&up.kindImage, "kind-image", kind.NodeImage, "the kind node image, with -backend kind")
	case "down", "status":
	case "-h", "-help", "--help", "help":
		usage(out)
		return nil
	default:
		usage(os.Stderr)
		return fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	up.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { up.set[f.Name] = true })
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	switch cmd {
	case "up":
		return cmdUp(abs, up, out)
	case "down":
		return cmdDown(abs, out)
	default:
		return cmdStatus(abs, out)
	}
}

func defaultDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "flotilla-fleet")
	}
	return filepath.Join(home, ".cache", "flotilla", "fleet")
}

type upFlags struct {
	n                         int
	mode, cpu, memory, labels string
	pods                      string
	backend, kindImage        string
	set                       map[string]bool // the flags given on the command line
}

func (u upFlags) options(dir string, out io.Writer) (testenv.Options, error) {
	opts := testenv.Options{
		Clusters: u.n,
		Dir:      dir,
		Detach:   true,
		Logf:     func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) },
	}
	switch u.mode {
	case "full":
		opts.Mode = testenv.Full
	case "apiserver-only":
		opts.Mode = testenv.APIServerOnly
	default:
		return opts, fmt.Errorf("-mode must be full or apiserver-only, got %q", u.mode)
	}
	if u.n < 1 {
		return opts, fmt.Errorf("-n must be at least 1, got %d", u.n)
	}
	for _, q := range []struct {
		flag, value string
		into        *resource.Quantity
	}{{"cpu", u.cpu, &opts.Node.CPU}, {"memory", u.memory, &opts.Node.Memory}, {"pods", u.pods, &opts.Node.Pods}} {
		v, err := resource.ParseQuantity(q.value)
		if err != nil {
			return opts, fmt.Errorf("-%s %q: %w", q.flag, q.value, err)
		}
		*q.into = v
	}
	labels, err := u.nodeLabels()
	opts.Node.Labels = labels
	return opts, err
}

func (u upFlags) nodeLabels() (map[string]string, error) {
	if u.labels == "" {
		return nil, nil
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(u.labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-labels: %q is not k=v", kv)
		}
		labels[k] = v
	}
	return labels, nil
}

func cmdUp(dir string, flags upFlags, out io.Writer) error {
	var opts testenv.Options
	var specs []kind.Spec
	var err error
	switch flags.backend {
	case backendProcess:
		if flags.set["kind-image"] {
			return errors.New("-kind-image needs -backend kind")
		}
		opts, err = flags.options(dir, out)
	case backendKind:
		specs, err = flags.kindSpecs(dir)
	default:
		err = fmt.Errorf("-backend must be %s or %s, got %q", backendProcess, backendKind, flags.backend)
	}
	if err != nil {
		return err
	}
	st, err := readState(dir)
	switch {
	case err == nil:
		if st.backend() != flags.backend {
			return fmt.Errorf("a %s fleet is up in %s: run `fleet down` (make fleet-down) before starting a %s one", st.backend(), dir, flags.backend)
		}
		running, total, err := countRunning(st)
		if err != nil {
			return err
		}
		if running == total && len(st.Clusters) > 0 {
			fmt.Fprintf(out, "fleet: already up in %s (%d %s cluster(s)); nothing to do\n", dir, len(st.Clusters), st.Mode)
			if len(st.Clusters) != flags.n {
				fmt.Fprintf(out, "fleet: note: %d cluster(s) were asked for; run `fleet down` first to change the size\n", flags.n)
			}
			printClusters(out, dir, st)
			return nil
		}
		if running == total {
			fmt.Fprintf(out, "fleet: an earlier up in %s did not finish; removing what it made and starting afresh\n", dir)
		} else {
			fmt.Fprintf(out, "fleet: %d of %d %s in %s are gone; stopping the rest and starting afresh\n", total-running, total, st.unit(), dir)
		}
		if err := st.stop(dir); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := testenv.ClaimDir(dir, markerFile, "fleet"); err != nil {
		return err
	}
	if flags.backend == backendKind {
		return upKind(dir, specs, out)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := testenv.StartFleet(ctx, opts)
	if errors.Is(err, testenv.ErrBinariesMissing) {
		return errors.Join(err, os.RemoveAll(dir)) // nothing ran, so there are no logs to keep
	}
	if err != nil {
		return err
	}
	st = &state{Version: testenv.Version, Mode: opts.Mode.String(), Started: time.Now().UTC(), Processes: f.Processes(), Backend: backendProcess}
	for _, c := range f.Clusters {
		st.Clusters = append(st.Clusters, clusterState{Name: c.Name, Host: c.Host})
	}
	if err := errors.Join(f.WriteKubeconfig(filepath.Join(dir, kubeconfig)), testenv.WriteState(filepath.Join(dir, stateFile), st)); err != nil {
		return errors.Join(err, f.Stop())
	}
	fmt.Fprintf(out, "fleet: %d %s cluster(s) up in %s\n", len(f.Clusters), st.Mode, f.StartupTime)
	printClusters(out, dir, st)
	return nil
}

func cmdDown(dir string, out io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		fmt.Fprintf(out, "fleet: no fleet in %s; nothing to do\n", dir)
		return nil //nolint:nilerr // no marker means no fleet: down is then a no-op, not a failure
	}
	st, err := readState(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if st != nil {
		running, _, _ := countRunning(st)
		fmt.Fprintf(out, "fleet: stopping %d %s of %d cluster(s)\n", running, st.unit(), len(st.Clusters))
		if err := st.stop(dir); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "fleet: down; removed %s\n", dir)
	return nil
}

func cmdStatus(dir string, out io.Writer) error {
	st, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(out, "fleet: no fleet in %s\n", dir)
		return nil
	}
	if err != nil {
		return err
	}
	running, total, err := countRunning(st)
	if err != nil {
		return err
	}
	if st.backend() == backendKind {
		fmt.Fprintf(out, "fleet: %s, %d kind cluster(s), %d of %d there, started %s\n",
			dir, len(st.Clusters), running, total, st.Started.Local().Format(time.DateTime))
		for _, name := range st.KindClusters {
			fmt.Fprintf(out, "  kind cluster %s\n", name)
		}
		return nil
	}
	fmt.Fprintf(out, "fleet: %s, %d %s cluster(s), %d of %d processes running, started %s\n",
		dir, len(st.Clusters), st.Mode, running, total, st.Started.Local().Format(time.DateTime))
	for _, p := range st.Processes {
		status := "running"
		if !p.Running() {
			status = "gone"
		}
		name := p.Name
		if p.Cluster != "" {
			name = p.Cluster + "/" + p.Name
		}
		fmt.Fprintf(out, "  %-32s pid %-7d %-7s %s\n", name, p.PID, status, p.Log)
	}
	return nil
}

func printClusters(out io.Writer, dir string, st *state) {
	for _, c := range st.Clusters {
		fmt.Fprintf(out, "  %-10s %s\n", c.Name, c.Host)
	}
	kc := filepath.Join(dir, kubeconfig)
	fmt.Fprintf(out, "  kubeconfig: %s (contexts %s … %s)\n", kc, st.Clusters[0].Name, st.Clusters[len(st.Clusters)-1].Name)
	fmt.Fprintf(out, "  try:        kubectl --kubeconfig %s --context %s get nodes\n", kc, st.Clusters[0].Name)
}

func countRunning(st *state) (running, total int, err error) {
	if st.backend() == backendKind {
		return countKind(st)
	}
	for _, p := range st.Processes {
		if p.Running() {
			running++
		}
	}
	return running, len(st.Processes), nil
}

func readState(dir string) (*state, error) {
	var st state
	if err := testenv.ReadState(filepath.Join(dir, stateFile), &st); err != nil {
		return nil, err
	}
	return &st, nil
}
