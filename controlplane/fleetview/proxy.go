package fleetview

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

// Target is how the proxy reaches one member.
type Target struct {
	// Config holds the member's address and TLS trust only (Host, CA,
	// server name); any credential in it is ignored.
	Config *rest.Config
	// ProxyURL is the Cluster's spec.proxyURL, empty for a direct connection.
	ProxyURL string
	// ProxyHeader is the Cluster's spec.proxyHeader, sent to that proxy on
	// CONNECT; comma-separated values become several.
	ProxyHeader map[string]string
	// ImpersonatorToken is the bearer token of the identity that may
	// impersonate users in the member (spec.impersonatorSecretRef).
	ImpersonatorToken string
	// ImpersonableGroups are the groups the impersonator may impersonate
	// in the member; a requester's other groups are not forwarded, which
	// can only take rights away there.
	ImpersonableGroups []string
}

// Targets returns the Target of the Cluster name. An error that is an
// apierrors.APIStatus reaches the caller as it is (a refused pull-mode
// member, a missing Cluster); any other is an internal error.
type Targets func(ctx context.Context, name string) (Target, error)

// serveProxy sends an authorised clusters/<name>/proxy/<path> request to the
// member as the requesting user.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup != Group || info.APIVersion != Version ||
		info.Resource != Resource || info.Subresource != Subresource || info.Name == "" {
		writeError(w, r, apierrors.NewNotFound(GroupVersion.WithResource(Resource).GroupResource(), r.URL.Path))
		return
	}
	requester, ok := request.UserFrom(ctx)
	if !ok || requester.GetName() == "" {
		writeError(w, r, apierrors.NewUnauthorized("no user in the request"))
		return
	}
	prefix := "/apis/" + Group + "/" + Version + "/" + Resource + "/" + info.Name + "/" + Subresource
	memberPath := strings.TrimPrefix(r.URL.Path, prefix)
	if memberPath == r.URL.Path {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("path %q is not under %s", r.URL.Path, prefix)))
		return
	}
	if memberPath == "" {
		memberPath = "/"
	}
	target, err := s.opts.Targets(ctx, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	rt, location, err := s.transport(target, requester)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("cluster %s: %w", info.Name, err)))
		return
	}
	if !streaming(r) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	out := r.Clone(ctx)
	stripCredentials(out.Header)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = location.Scheme, location.Host
			pr.Out.URL.Path = strings.TrimSuffix(location.Path, "/") + memberPath
			pr.Out.URL.RawPath = ""
			pr.Out.Host = location.Host
		},
		Transport: rt,
		// Watches and followed logs stream: flush every write.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
				writeError(w, r, apierrors.NewTimeoutError(fmt.Sprintf("cluster %s did not answer within %s", info.Name, s.opts.RequestTimeout), 0))
				return
			}
			writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: %v", info.Name, err)))
		},
	}
	proxy.ServeHTTP(w, out)
}

// transport is the round tripper that carries a request to target as
// requester: the impersonator's token, and Impersonate-User and
// Impersonate-Group set from the authenticated requester only.
func (s *Server) transport(target Target, requester user.Info) (http.RoundTripper, *url.URL, error) {
	if target.Config == nil || target.ImpersonatorToken == "" {
		return nil, nil, errors.New("no member address or impersonator token")
	}
	location, err := url.Parse(target.Config.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("member address %q: %w", target.Config.Host, err)
	}
	base, err := s.pools.get(target, func() (*http.Transport, error) { return s.baseTransport(target) })
	if err != nil {
		return nil, nil, err
	}
	impersonate := rest.ImpersonationConfig{UserName: requester.GetName()}
	for _, g := range requester.GetGroups() {
		// The member adds these itself; impersonating them would need a
		// rule for each and asserts nothing.
		if g == user.AllAuthenticated || g == user.AllUnauthenticated || !slices.Contains(target.ImpersonableGroups, g) {
			continue
		}
		impersonate.Groups = append(impersonate.Groups, g)
	}
	rt, err := rest.HTTPWrappersForConfig(&rest.Config{BearerToken: target.ImpersonatorToken, Impersonate: impersonate}, base)
	if err != nil {
		return nil, nil, err
	}
	return rt, location, nil
}

// baseTransport is the connection pool to target's address: its TLS trust
// and proxy only. Only the member's address and TLS trust are kept from the
// member's config, so the control plane's own credentials never reach it, and
// connections carry no identity of their own: each request authenticates
// with the impersonator's token added by its wrapper, which is why one pool
// may serve every user.
func (s *Server) baseTransport(target Target) (*http.Transport, error) {
	tlsConfig, err := rest.TLSConfigFor(rest.AnonymousClientConfig(target.Config))
	if err != nil {
		return nil, fmt.Errorf("member TLS: %w", err)
	}
	dialer := &net.Dialer{Timeout: s.opts.RequestTimeout, KeepAlive: 30 * time.Second}
	base := &http.Transport{
		TLSClientConfig:       tlsConfig,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   s.opts.RequestTimeout,
		ResponseHeaderTimeout: s.opts.RequestTimeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
		// Upgrades (exec, attach, port-forward) need HTTP/1.1.
		ForceAttemptHTTP2: false,
	}
	if target.ProxyURL != "" {
		proxyURL, err := url.Parse(target.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("spec.proxyURL: %w", err)
		}
		base.Proxy = http.ProxyURL(proxyURL)
		base.ProxyConnectHeader = proxyHeader(target.ProxyHeader)
	}
	return base, nil
}

// stripCredentials removes from the outgoing request every header that
// authenticates or asserts an identity: whatever the caller sent, the
// member sees only the impersonator's token and the impersonation headers
// the transport sets from the authenticated requester.
func stripCredentials(h http.Header) {
	h.Del("Authorization")
	for k := range h {
		lower := strings.ToLower(k)
		if strings.HasPrefix(lower, "impersonate-") || strings.HasPrefix(lower, "x-remote-") {
			h.Del(k)
		}
	}
}

// proxyHeader turns spec.proxyHeader into CONNECT headers, a
// comma-separated value into several, as Karmada reads it.
func proxyHeader(m map[string]string) http.Header {
	if len(m) == 0 {
		return nil
	}
	h := http.Header{}
	for k, v := range m {
		for _, part := range strings.Split(v, ",") {
			h.Add(k, strings.TrimSpace(part))
		}
	}
	return h
}

// streaming says whether r is a watch, a followed log or an upgrade, which
// may run for as long as the caller wants.
func streaming(r *http.Request) bool {
	q := r.URL.Query()
	return q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true" ||
		strings.EqualFold(r.Header.Get("Connection"), "upgrade") || r.Header.Get("Upgrade") != ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
