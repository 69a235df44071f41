package main

import (
	"encoding/json"
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

// claimDir makes dir an empty directory of ours. It refuses a non-empty
// directory without the marker, so a mistyped -dir never loses files.
func claimDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
			return fmt.Errorf("%s is not empty and is not a localup directory; choose another -dir", dir)
		}
		for _, e := range entries { // logs of a failed up, whose processes are gone
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, markerFile), []byte("made by `localup up`; `localup down` removes this directory\n"), 0o600)
}

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	return &st, nil
}

// writeState replaces the state file atomically.
func writeState(dir string, st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, stateFile))
}
