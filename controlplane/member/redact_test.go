package member

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScrub checks the second line of defence: an error from a library that
// quotes a credential comes out without it and still unwraps.
func TestScrub(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	conn := Connection{
		Host: "https://10.0.0.1", Token: secretToken, ClientKey: pki.Key,
		ProxyURL: "http://u:" + secretProxy + "@proxy:3128",
		Exec:     &ExecConfig{Command: "x", Env: map[string]string{"T": secretEnv}},
	}
	s := conn.secrets()
	sentinel := errors.New("sentinel")
	tests := []struct {
		in   error
		want string
	}{
		{fmt.Errorf("bad token %q: %w", secretToken, sentinel), `bad token "[redacted]": sentinel`},
		{fmt.Errorf("env T=%s proxy password %s: %w", secretEnv, secretProxy, sentinel), "env T=[redacted] proxy password [redacted]: sentinel"},
		{fmt.Errorf("cannot parse key %s: %w", pki.Key[30:90], sentinel), "cannot parse key [redacted]: sentinel"},
		{fmt.Errorf("nothing secret here: %w", sentinel), "nothing secret here: sentinel"},
	}
	for _, tt := range tests {
		got := s.scrub(tt.in)
		if diff := cmp.Diff(tt.want, got.Error()); diff != "" {
			t.Errorf("scrub (-want +got):\n%s", diff)
		}
		if !errors.Is(got, sentinel) {
			t.Errorf("scrub(%q) no longer wraps its cause", tt.want)
		}
	}
	if s.scrub(nil) != nil {
		t.Errorf("scrub(nil) != nil")
	}
}
