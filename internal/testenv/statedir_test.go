package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaimDir(t *testing.T) {
	const marker = ".mine"
	for _, tc := range []struct {
		name    string
		files   []string // present before ClaimDir
		wantErr string
	}{
		{name: "absent"},
		{name: "empty", files: []string{}},
		{name: "marked, with old logs", files: []string{marker, "old.log"}},
		{name: "someone else's", files: []string{"thesis.tex"}, wantErr: "is not empty and is not a localup directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			if tc.files != nil {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := ClaimDir(dir, marker, "localup")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ClaimDir = %v, want an error containing %q", err, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(dir, tc.files[0])); err != nil {
					t.Fatalf("a refused directory lost %s: %v", tc.files[0], err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != marker {
				t.Fatalf("after ClaimDir the directory holds %v, want only %s", entries, marker)
			}
		})
	}
}

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	in := []ProcessInfo{{Cluster: "member1", Name: "kube-apiserver", PID: 42, Cmdline: []string{"/bin/kube-apiserver", "--v=1"}, Log: "a.log"}}
	if err := WriteState(path, in); err != nil {
		t.Fatal(err)
	}
	var out []ProcessInfo
	if err := ReadState(path, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].PID != 42 || out[0].Cmdline[1] != "--v=1" || out[0].Cluster != "member1" {
		t.Fatalf("round trip = %+v, want %+v", out, in)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadState(path, &out); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("ReadState of broken JSON = %v, want an error naming %s", err, path)
	}
}
