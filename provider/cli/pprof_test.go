package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{addr: "", ok: true},
		{addr: "127.0.0.1:6060", ok: true},
		{addr: "[::1]:6060", ok: true},
		{addr: "localhost:6060", ok: true},
		{addr: ":6060"},
		{addr: "0.0.0.0:6060"},
		{addr: "10.0.0.1:6060"},
		{addr: "example.com:6060"},
		{addr: "127.0.0.1"},
	} {
		err := checkLoopback(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
}

// TestControlplanePprofFlag: profiles are never served beyond the machine;
// the process refuses a non-loopback address at start, naming the flag.
func TestControlplanePprofFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "host.kubeconfig", "--pprof-bind-address", ":6060"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if want := `--pprof-bind-address: ":6060": the host must be a loopback address`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
