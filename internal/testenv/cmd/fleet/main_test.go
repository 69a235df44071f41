package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv/kind"
)

// TestUpRefusesBadFlags: each bad combination is refused with the flag's name
// before anything starts, and the directory is not claimed.
func TestUpRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown backend", []string{"-backend", "podman"}, `-backend must be process or kind, got "podman"`},
		{"kind with fake-node capacity", []string{"-backend", "kind", "-cpu", "4"}, "-cpu shapes the process fleet's fake nodes"},
		{"kind without apiserver-only", []string{"-backend", "kind", "-mode", "apiserver-only"}, "-mode shapes the process fleet's fake nodes"},
		{"kind with no members", []string{"-backend", "kind", "-n", "0"}, "-n must be at least 1, got 0"},
		{"kind, label not k=v", []string{"-backend", "kind", "-labels", "zone"}, `-labels: "zone" is not k=v`},
		{"kind, invalid label value", []string{"-backend", "kind", "-labels", "zone=east west"}, `kind cluster "flotilla-`},
		{"kind image for processes", []string{"-kind-image", "kindest/node:v1.35.0"}, "-kind-image needs -backend kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fleet")
			err := run(append([]string{"up", "-dir", dir}, tc.args...), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("up %q = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused up left %s behind (%v)", dir, err)
			}
		})
	}
}

// TestUpRefusesOtherBackend: up never starts a fleet of one backend over a
// fleet of the other recorded in the directory, which down would then not
// remove.
func TestUpRefusesOtherBackend(t *testing.T) {
	for _, tc := range []struct {
		recorded, asked, wantErr string
	}{
		{"", backendKind, "a process fleet is up in"}, // a state from before kind
		{backendProcess, backendKind, "a process fleet is up in"},
		{backendKind, backendProcess, "a kind fleet is up in"},
	} {
		t.Run(tc.recorded+"→"+tc.asked, func(t *testing.T) {
			dir := t.TempDir()
			if err := testenv.ClaimDir(dir, markerFile, "fleet"); err != nil {
				t.Fatal(err)
			}
			st := &state{Backend: tc.recorded, Clusters: []clusterState{{Name: "member1", Host: "https://127.0.0.1:1"}}}
			if err := testenv.WriteState(filepath.Join(dir, stateFile), st); err != nil {
				t.Fatal(err)
			}
			err := run([]string{"up", "-dir", dir, "-backend", tc.asked}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("up -backend %s over a %q state = %v, want an error containing %q", tc.asked, tc.recorded, err, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(dir, stateFile)); err != nil {
				t.Fatalf("the recorded state is gone: %v", err)
			}
		})
	}
}

// TestUpKindWithoutDocker: where no Docker engine runs, a kind up says so,
// makes nothing and leaves no directory behind (where Docker runs, the kind
// package's TestCreateDelete makes real clusters instead).
func TestUpKindWithoutDocker(t *testing.T) {
	if kind.Docker(t.Context()) == nil {
		t.Skip("Docker runs here, so up would make real kind clusters; internal/testenv/kind's TestCreateDelete covers them")
	}
	dir := filepath.Join(t.TempDir(), "fleet")
	err := run([]string{"up", "-dir", dir, "-backend", "kind", "-n", "1"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "kind clusters need a running Docker engine") {
		t.Fatalf("up -backend kind without Docker = %v, want an error saying Docker is needed", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed kind up left %s behind (%v)", dir, err)
	}
	var out strings.Builder
	if err := run([]string{"down", "-dir", dir}, &out); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Fatalf("down after a failed up = %v (%s), want nothing to do", err, out.String())
	}
}
