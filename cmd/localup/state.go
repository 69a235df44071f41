package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// state is what up leaves behind for stop-member and down: every process it
// started, by PID and command line, and every kind cluster it made, by name.
type state struct {
	Dir          string                `json:"dir"`
	Started      time.Time             `json:"started"`
	MemberNames  []string              `json:"memberNames"`
	Controlplane *testenv.ProcessInfo  `json:"controlplane,omitempty"`
	Host         []testenv.ProcessInfo `json:"host"`
	Members      []testenv.ProcessInfo `json:"members"`
	// Backend is backendProcess or backendKind; empty (a state written
	// before kind was supported) means backendProcess.
	Backend string `json:"backend,omitempty"`
	// KindClusters are the kind clusters of the host and the members, recorded
	// before up made them.
	KindClusters []string `json:"kindClusters,omitempty"`
}

func (st *state) all() []testenv.ProcessInfo {
	procs := append(append([]testenv.ProcessInfo{}, st.Host...), st.Members...)
	if st.Controlplane != nil {
		procs = append(procs, *st.Controlplane)
	}
	return procs
}

// countRunning counts the recorded processes that run and kind clusters
// that exist.
func (st *state) countRunning() (running, total int, err error) {
	procs := st.all()
	for _, p := range procs {
		if p.Running() {
			running++
		}
	}
	if len(st.KindClusters) == 0 {
		return running, len(procs), nil
	}
	there, err := st.kindFleet().Existing()
	if err != nil {
		return 0, 0, err
	}
	for _, name := range st.KindClusters {
		if slices.Contains(there, name) {
			running++
		}
	}
	return running, len(procs) + len(st.KindClusters), nil
}

// stop stops the control plane first, so it does not spend its shutdown
// probing vanished members, then the members and the host.
func (st *state) stop() error {
	var errs []error
	if st.Controlplane != nil {
		errs = append(errs, testenv.StopDetached([]testenv.ProcessInfo{*st.Controlplane}, stopGrace))
	}
	errs = append(errs, testenv.StopDetached(append(append([]testenv.ProcessInfo{}, st.Members...), st.Host...), stopGrace))
	if len(st.KindClusters) > 0 {
		errs = append(errs, st.kindFleet().Delete(st.KindClusters))
	}
	return errors.Join(errs...)
}

func cmdStopMember(dir, name string, out io.Writer) error {
	st, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no local control plane in %s: run `localup up` first", dir)
	}
	if err != nil {
		return err
	}
	if st.backend() == backendKind {
		return st.stopKindMember(name, out)
	}
	var procs []testenv.ProcessInfo
	for _, p := range st.Members {
		if p.Cluster == name {
			procs = append(procs, p)
		}
	}
	if len(procs) == 0 {
		return fmt.Errorf("no member %q in %s; members are %q", name, dir, st.MemberNames)
	}
	if err := testenv.StopDetached(procs, stopGrace); err != nil {
		return err
	}
	fmt.Fprintf(out, "localup: stopped member %s (%d process(es)); `localup down` stops the rest\n", name, len(procs))
	return nil
}

func cmdDown(dir string, out io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		fmt.Fprintf(out, "localup: no local control plane in %s; nothing to do\n", dir)
		return nil //nolint:nilerr // no marker means nothing of ours: down is then a no-op, not a failure
	}
	st, err := readState(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if st != nil {
		running, _, err := st.countRunning()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "localup: stopping %d process(es) and kind cluster(s)\n", running)
		if err := st.stop(); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "localup: down; removed %s\n", dir)
	return nil
}

func readState(dir string) (*state, error) {
	var st state
	if err := testenv.ReadState(filepath.Join(dir, stateFile), &st); err != nil {
		return nil, err
	}
	return &st, nil
}
