package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// state is what up leaves behind for stop-member and down: every process it
// started, by PID and command line.
type state struct {
	Dir          string                `json:"dir"`
	Started      time.Time             `json:"started"`
	MemberNames  []string              `json:"memberNames"`
	Controlplane *testenv.ProcessInfo  `json:"controlplane,omitempty"`
	Host         []testenv.ProcessInfo `json:"host"`
	Members      []testenv.ProcessInfo `json:"members"`
}

func (st *state) all() []testenv.ProcessInfo {
	procs := append(append([]testenv.ProcessInfo{}, st.Host...), st.Members...)
	if st.Controlplane != nil {
		procs = append(procs, *st.Controlplane)
	}
	return procs
}

func (st *state) countRunning() (running, total int) {
	procs := st.all()
	for _, p := range procs {
		if p.Running() {
			running++
		}
	}
	return running, len(procs)
}

// stop stops the control plane first, so it does not spend its shutdown
// probing vanished members, then the members and the host.
func (st *state) stop() error {
	var errs []error
	if st.Controlplane != nil {
		errs = append(errs, testenv.StopDetached([]testenv.ProcessInfo{*st.Controlplane}, stopGrace))
	}
	return errors.Join(append(errs, testenv.StopDetached(append(append([]testenv.ProcessInfo{}, st.Members...), st.Host...), stopGrace))...)
}

func cmdStopMember(dir, name string, out io.Writer) error {
	st, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no local control plane in %s: run `localup up` first", dir)
	}
	if err != nil {
		return err
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
		running, _ := st.countRunning()
		fmt.Fprintf(out, "localup: stopping %d process(es)\n", running)
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
