// Command localup runs flotilla's continuous control plane locally in one
// command, on real processes: a host kube-apiserver, the `controlplane`
// subcommand of terraform-provider-flotilla against it, and N member clusters
// (internal/testenv, detached), each registered as a Cluster on the host.
//
//	go run ./cmd/localup up -n 3 -bin bin/terraform-provider-flotilla
//	kubectl --kubeconfig ~/.cache/flotilla/controlplane/kubeconfig --context host get clusters.cluster.flotilla.io
//	go run ./cmd/localup stop-member member2   # a member goes down: failover
//	go run ./cmd/localup down                  # stop exactly what up started
//	go run ./cmd/localup up -backend kind ...  # host and members as kind clusters (Docker)
//
// up writes one kubeconfig with a context for the host and one per member and
// records every PID it started in the directory; down and stop-member signal
// only those PIDs, and only while each still runs its recorded command line.
// With -backend kind the host and the members are kind clusters, recorded by
// name before they are made; down deletes those and stop-member stops one's
// node containers.
//
// It lives outside internal/ because it registers flotilla's Cluster kind,
// and internal/ is the bottom layer that never imports controlplane/.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv/kind"
)

const (
	markerFile = ".flotilla-controlplane" // proves a directory is ours to empty and remove
	stateFile  = "state.json"
	kubeconfig = "kubeconfig"
	hostName   = "host"
	stopGrace  = 5 * time.Second
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "localup: %v\n", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  localup up          [-n 3] [-dir DIR] [-bin terraform-provider-flotilla] [-backend process|kind] [-kind-image IMAGE] [-- CONTROLPLANE FLAGS...]
  localup stop-member [-dir DIR] NAME
  localup down        [-dir DIR]
DIR defaults to $HOME/.cache/flotilla/controlplane. Flags after -- are passed
to the controlplane subcommand after localup's own (later flags win).
-backend process (the default) runs the host and the members as local
processes; -backend kind makes them kind clusters and needs a running Docker
engine.
`)
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		usage(os.Stderr)
		return errors.New("missing subcommand")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("localup "+cmd, flag.ContinueOnError)
	fs.Usage = func() { usage(fs.Output()) }
	dir := fs.String("dir", defaultDir(), "directory of the local control plane")
	var up upFlags
	switch cmd {
	case "up":
		fs.IntVar(&up.members, "n", 3, "number of member clusters")
		fs.StringVar(&up.bin, "bin", "terraform-provider-flotilla", "the terraform-provider-flotilla binary that runs `controlplane`")
		fs.DurationVar(&up.timeout, "timeout", 3*time.Minute, "how long up may take until every member is a Ready Cluster (10m with -backend kind)")
		fs.StringVar(&up.backend, "backend", backendProcess, "process (local processes) or kind (kind clusters, needs Docker)")
		fs.StringVar(&up.kindImage, "kind-image", kind.NodeImage, "the kind node image, with -backend kind")
		fs.StringVar(&up.apiGroups, "api-groups", string(apis.FlotillaGroups), "API groups the control plane serves and the members are registered in: flotilla or karmada (its --api-groups)")
	case "down", "stop-member":
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
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	switch cmd {
	case "up":
		up.extra = fs.Args()
		if up.members < 1 {
			return fmt.Errorf("-n must be at least 1, got %d", up.members)
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		switch {
		case up.backend == backendKind && !set["timeout"]:
			up.timeout = kindTimeout
		case up.backend == backendProcess && set["kind-image"]:
			return errors.New("-kind-image needs -backend kind")
		case up.backend != backendProcess && up.backend != backendKind:
			return fmt.Errorf("-backend must be %s or %s, got %q", backendProcess, backendKind, up.backend)
		}
		groups, err := apis.ParseGroups(up.apiGroups)
		if err != nil {
			return fmt.Errorf("-api-groups: %w", err)
		}
		// The Clusters are registered in the groups the control plane serves.
		apis.Use(groups)
		if groups != apis.FlotillaGroups {
			// Only when asked: a control plane binary older than the flag still starts.
			up.extra = append([]string{"--api-groups=" + string(groups)}, up.extra...)
		}
		return cmdUp(abs, up, out)
	case "stop-member":
		if fs.NArg() != 1 {
			return fmt.Errorf("stop-member takes one member name, got %q", fs.Args())
		}
		return cmdStopMember(abs, fs.Arg(0), out)
	default:
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected arguments %q", fs.Args())
		}
		return cmdDown(abs, out)
	}
}

func defaultDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "flotilla-controlplane")
	}
	return filepath.Join(home, ".cache", "flotilla", "controlplane")
}
