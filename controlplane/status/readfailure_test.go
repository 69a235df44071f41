package status

import (
	"errors"
	"fmt"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestReadFailure checks that a member's read error is cut to its cause,
// since the observation already names the member and the object.
func TestReadFailure(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("no"))
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis/apps/v1", Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")}
	notConnected := errors.New("not connected")
	wrap := func(err error) error {
		return fmt.Errorf("observe Deployment default/web in cluster east: %w", fmt.Errorf("not attempted, %w", fmt.Errorf("cannot connect: %w", err)))
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an apiserver's answer", fmt.Errorf("observe Deployment default/web in cluster east: %w", forbidden), "read failed: " + forbidden.Error()},
		{"a transport error, without its URL", wrap(refused), "unreachable: dial tcp 127.0.0.1:6443: connect: connection refused"},
		{"not connected", wrap(notConnected), "unreachable: not connected"},
		{"a plain error", errors.New("boom"), "unreachable: boom"},
	}
	for _, tc := range tests {
		if got := readFailure(tc.err); got != tc.want {
			t.Errorf("%s: readFailure = %q, want %q", tc.name, got, tc.want)
		}
	}
}
