package cli

import (
	"fmt"
	"net"
)

// checkLoopback accepts an empty address (the endpoint is off) or a
// host:port whose host is a loopback address or localhost: profiles show
// the process' memory layout and code paths, so they are never served
// beyond the machine.
func checkLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q: the host must be a loopback address (127.0.0.1, ::1 or localhost), not %q", addr, host)
}
