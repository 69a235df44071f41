package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv/kind"
)

// processOnly are the flags that shape the process fleet's fake kwok nodes;
// a kind node is a real one, with the machine's capacity.
var processOnly = []string{"mode", "cpu", "memory", "pods"}

// kindSpecs are the members of a kind fleet in dir: member1 … memberN.
func (u upFlags) kindSpecs(dir string) ([]kind.Spec, error) {
	for _, name := range processOnly {
		if u.set[name] {
			return nil, fmt.Errorf("-%s shapes the process fleet's fake nodes; a kind node has the machine's capacity (drop -%s or -backend kind)", name, name)
		}
	}
	if u.n < 1 {
		return nil, fmt.Errorf("-n must be at least 1, got %d", u.n)
	}
	labels, err := u.nodeLabels()
	if err != nil {
		return nil, err
	}
	specs := make([]kind.Spec, u.n)
	for i := range specs {
		specs[i] = kind.Spec{Name: fmt.Sprintf("member%d", i+1), Prefix: kind.Prefix(dir), Labels: labels, Image: u.kindImage}
		if _, err := kind.Config(specs[i]); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// upKind makes the members as kind clusters, recording their names in the
// state before it makes them (see kind.Fleet.Up), so down deletes exactly
// those.
func upKind(dir string, specs []kind.Spec, out io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &kind.Fleet{Dir: dir, Logf: func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }}
	begin := time.Now()
	st := &state{Version: testenv.Version, Mode: backendKind, Started: begin.UTC(), Backend: backendKind}
	path := filepath.Join(dir, stateFile)
	clusters, err := f.Up(ctx, specs, func(names []string) error {
		st.KindClusters = names
		return testenv.WriteState(path, st)
	})
	if err != nil {
		// Up deleted what it made; a recorded state stays for down, and a
		// directory with none (no Docker, a name taken) is removed.
		if st.KindClusters == nil {
			err = errors.Join(err, os.RemoveAll(dir))
		}
		return err
	}
	for _, c := range clusters {
		st.Clusters = append(st.Clusters, clusterState{Name: c.Name, Host: c.Host})
	}
	if err := errors.Join(testenv.WriteState(path, st), testenv.WriteContexts(filepath.Join(dir, kubeconfig), testenv.ClusterContexts(clusters))); err != nil {
		return errors.Join(err, st.stop(dir))
	}
	fmt.Fprintf(out, "fleet: %d kind cluster(s) up in %s\n", len(clusters), time.Since(begin).Round(100*time.Millisecond))
	printClusters(out, dir, st)
	return nil
}

// countKind counts the recorded kind clusters that still exist.
func countKind(st *state) (running, total int, err error) {
	existing, err := (&kind.Fleet{}).Existing()
	if err != nil {
		return 0, 0, err
	}
	for _, name := range st.KindClusters {
		if slices.Contains(existing, name) {
			running++
		}
	}
	return running, len(st.KindClusters), nil
}

// stop stops what st records: the processes, or the kind clusters.
func (st *state) stop(dir string) error {
	if st.backend() == backendKind {
		return (&kind.Fleet{Dir: dir, Logf: func(string, ...any) {}}).Delete(st.KindClusters)
	}
	return testenv.StopDetached(st.Processes, stopGrace)
}

// unit names what countRunning counts.
func (st *state) unit() string {
	if st.backend() == backendKind {
		return "kind cluster(s)"
	}
	return "process(es)"
}
