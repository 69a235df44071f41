package member

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// The ways a member can fail a probe besides api.ErrNotConnected. Probe's
// errors wrap exactly one of them or api.ErrNotConnected, so callers can tell
// them apart with errors.Is; the message reads
// "cluster <name> is <sentinel>: <cause>".
var (
	// ErrUnauthorized means the apiserver answered but refused flotilla's
	// credentials (401), or its health endpoints were forbidden to them.
	ErrUnauthorized = errors.New("refusing flotilla's credentials")
	// ErrNotReady means the apiserver answered that it is not healthy.
	ErrNotReady = errors.New("not ready")
)

// Probe asks the member's apiserver whether it is ready: GET /readyz, and
// GET /healthz when /readyz is missing (404) or forbidden (403), as Karmada
// does for old or locked-down apiservers. The whole probe is bounded by the
// cache's ProbeTimeout. It returns nil when the member answered 200, and
// otherwise an error wrapping api.ErrNotConnected, ErrUnauthorized or
// ErrNotReady, e.g.
//
//	cluster east is not connected: dial tcp 127.0.0.1:1234: connect: connection refused
func (c *Client) Probe(ctx context.Context) error {
	probeCtx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	var unconnected atomic.Bool
	if c.connectTimeout > 0 && c.connectTimeout < c.probeTimeout {
		var stop func()
		probeCtx, stop = c.connectDeadline(probeCtx, cancel, &unconnected)
		defer stop()
	}
	code, body, err := c.get(probeCtx, "/readyz")
	path := "/readyz"
	if err == nil && (code == http.StatusNotFound || code == http.StatusForbidden) {
		path = "/healthz"
		code, body, err = c.get(probeCtx, path)
	}
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return fmt.Errorf("probe cluster %s: %w", c.Name, ctx.Err())
		}
		if unconnected.Load() {
			return c.probeError(api.ErrNotConnected, fmt.Errorf("no connection within %s", c.connectTimeout))
		}
		if probeCtx.Err() != nil {
			return c.probeError(api.ErrNotConnected, fmt.Errorf("no answer within %s", c.probeTimeout))
		}
		return c.probeError(api.ErrNotConnected, transportCause(err))
	case code == http.StatusOK:
		return nil
	case code == http.StatusUnauthorized:
		return c.probeError(ErrUnauthorized, fmt.Errorf("%s answered %d Unauthorized", path, code))
	case code == http.StatusForbidden:
		return c.probeError(ErrUnauthorized, fmt.Errorf("/readyz and /healthz answered %d Forbidden", code))
	default:
		return c.probeError(ErrNotReady, fmt.Errorf("%s answered %d%s", path, code, failedChecks(body)))
	}
}

// connectDeadline returns ctx traced so that each connection the probe asks
// the transport for must be had within the client's connect timeout, or
// cancel ends the probe and unconnected is set. The clock starts when the
// transport asks for a connection (httptrace's GetConn), after any
// credential plugin has run, so a slow plugin is not taken for a member
// that is down; a connection already pooled is had at once. stop releases
// the timer.
func (c *Client) connectDeadline(ctx context.Context, cancel context.CancelFunc, unconnected *atomic.Bool) (_ context.Context, stop func()) {
	var mu sync.Mutex
	var timer *time.Timer
	stop = func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			mu.Lock()
			defer mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			timer = time.AfterFunc(c.connectTimeout, func() { unconnected.Store(true); cancel() })
		},
		GotConn: func(httptrace.GotConnInfo) { stop() },
	}), stop
}

func (c *Client) probeError(kind, cause error) error {
	return fmt.Errorf("cluster %s is %w: %w", c.Name, kind, c.secrets.scrub(cause))
}

// get requests an absolute path and returns the status code and body; err
// is set only when no HTTP answer came back.
//
// The request is sent once. client-go retries a GET whose connection was
// reset or closed (io.EOF) after an artificial one-second Retry-After, up
// to ten times: a member whose apiserver is stopped behind a load balancer
// that accepts and closes every connection would hold each probe for its
// whole deadline (three connections in 3 s), and a Terraform run pays each
// provider process's probe. A closed connection is an answer: the member is
// not serving. A member that is merely slow is still given the whole
// deadline, which bounds the wait for an answer, not the retries.
func (c *Client) get(ctx context.Context, path string) (int, []byte, error) {
	var code int
	result := c.Kubernetes.Discovery().RESTClient().Get().AbsPath(path).MaxRetries(0).Do(ctx).StatusCode(&code)
	body, err := result.Raw()
	if code == 0 && err != nil {
		return 0, nil, err
	}
	return code, body, nil
}

// transportCause strips client-go's `Get "https://…/readyz": ` prefix, which
// only repeats what the caller knows, down to the network or TLS error.
func transportCause(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

// failedChecks picks the failed checks ("[-]etcd failed: …") out of a
// verbose /readyz or /healthz body, for the message.
func failedChecks(body []byte) string {
	var failed []string
	for line := range strings.Lines(string(body)) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "[-]") {
			failed = append(failed, line)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return ": " + strings.Join(failed, "; ")
}
