package cli

import "testing"

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
