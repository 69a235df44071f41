package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpExitsZero: -h prints a command's flags and exits 0, as Go
// programs do; an unknown flag still exits with the command's bad-input code.
func TestHelpExitsZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(args []string, stderr *bytes.Buffer) int
		flag string
		bad  int
	}{
		{"controlplane", func(a []string, e *bytes.Buffer) int { return Controlplane(a, e) }, "-kubeconfig", 2},
		{"crossplane", func(a []string, e *bytes.Buffer) int { return Crossplane(a, e) }, "-kubeconfig", 2},
		{"preview", func(a []string, e *bytes.Buffer) int {
			return Preview(a, strings.NewReader(""), &bytes.Buffer{}, e)
		}, "-o", ExitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := tc.run([]string{"-h"}, &stderr); code != 0 {
				t.Errorf("-h exited %d, want 0:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.flag) {
				t.Errorf("-h printed no %s flag:\n%s", tc.flag, stderr.String())
			}
			stderr.Reset()
			if code := tc.run([]string{"-no-such-flag"}, &stderr); code != tc.bad {
				t.Errorf("an unknown flag exited %d, want %d:\n%s", code, tc.bad, stderr.String())
			}
		})
	}
}
