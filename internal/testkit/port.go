package testkit

import (
	"net"
	"strconv"
	"testing"
)

// FreePort returns a loopback port that was free at the time of the call and
// that nothing listens on when it returns.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// FreeAddr is FreePort as an address, "127.0.0.1:<port>".
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}
