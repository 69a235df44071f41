package fleetview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	// Group is the API group of the cluster proxy.
	Group = "clusterproxy.flotilla.io"
	// Version is its only version.
	Version = "v1alpha1"
	// Resource is the resource whose proxy subresource reaches a member.
	Resource = "clusters"
	// Subresource is the subresource that proxies to the member.
	Subresource = "proxy"
	// APIServiceName is the name of the APIService that registers the
	// cluster proxy on the host.
	APIServiceName = Version + "." + Group

	// DefaultRequestTimeout bounds a request to a member until its response
	// headers arrive, and a whole request that is not a watch or a follow.
	DefaultRequestTimeout = 30 * time.Second

	// The ConfigMap in which the host publishes its front proxy's
	// request-header configuration for extension apiservers.
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
)

// GroupVersion is the cluster proxy's GroupVersion.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Options configures the server.
type Options struct {
	// BindAddress is where the server listens, host:port.
	BindAddress string
	// Certificate serves TLS; the APIService's caBundle must trust it for
	// the name <service>.<namespace>.svc.
	Certificate dynamiccertificates.CertKeyContentProvider
	// RequestTimeout bounds each request to a member (DefaultRequestTimeout
	// when zero): until the response headers arrive for every request, and
	// in total for one that is not a watch or a follow, so one stalled
	// member answers 504 instead of holding the caller.
	RequestTimeout time.Duration
	// Targets says how a Cluster is reached by the proxy.
	Targets Targets
	// Listener, when set, is used instead of listening on BindAddress
	// (tests pick a free port this way).
	Listener net.Listener
	// Search, when set, is the search cache served below SearchPrefix.
	Search *Cache
}

// Server is the cluster proxy's HTTPS server, a manager.Runnable.
type Server struct {
	opts     Options
	host     kubernetes.Interface
	authz    authorizer.Authorizer
	handler  http.Handler
	runFirst []func(context.Context) error
	runners  []func(context.Context)
	pools    pools
}

// New builds the server over the host's clientset: the delegating
// authenticator reads the host's front-proxy configuration from the
// kube-system/extension-apiserver-authentication ConfigMap (so only the
// host's aggregator may assert a user in headers) and checks bearer tokens
// with TokenReview; the authorizer asks the host with SubjectAccessReview.
func New(host kubernetes.Interface, opts Options) (*Server, error) {
	if opts.Certificate == nil {
		return nil, errors.New("cluster proxy: a serving certificate is required")
	}
	if opts.Targets == nil {
		return nil, errors.New("cluster proxy: targets are required")
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	s := &Server{opts: opts, host: host}

	caController, err := dynamiccertificates.NewDynamicCAFromConfigMapController("request-header-ca",
		authConfigMapNamespace, authConfigMapName, "requestheader-client-ca-file", host)
	if err != nil {
		return nil, fmt.Errorf("cluster proxy: request-header CA: %w", err)
	}
	headers := headerrequest.NewRequestHeaderAuthRequestController(authConfigMapName, authConfigMapNamespace, host,
		"requestheader-username-headers", "requestheader-uid-headers", "requestheader-group-headers",
		"requestheader-extra-headers-prefix", "requestheader-allowed-names")
	requestHeader := &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StringSliceProviderFunc(headers.UsernameHeaders),
		UIDHeaders:          headerrequest.StringSliceProviderFunc(headers.UIDHeaders),
		GroupHeaders:        headerrequest.StringSliceProviderFunc(headers.GroupHeaders),
		ExtraHeaderPrefixes: headerrequest.StringSliceProviderFunc(headers.ExtraHeaderPrefixes),
		CAContentProvider:   caController,
		AllowedClientNames:  headerrequest.StringSliceProviderFunc(headers.AllowedClientNames),
	}
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		// No anonymous access: every proxied request acts as someone.
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  host.AuthenticationV1(),
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff,
		CacheTTL:                 10 * time.Second,
		RequestHeaderConfig:      requestHeader,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("cluster proxy: delegated authentication: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: host.AuthorizationV1(),
		AllowCacheTTL:             10 * time.Second,
		DenyCacheTTL:              10 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("cluster proxy: delegated authorization: %w", err)
	}
	s.authz = authz
	s.runFirst = []func(context.Context) error{caController.RunOnce, headers.RunOnce}
	s.runners = []func(context.Context){
		func(ctx context.Context) { caController.Run(ctx, 1) },
		func(ctx context.Context) { headers.Run(ctx, 1) },
	}

	codecs := scheme.Codecs
	resolver := &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	var h http.Handler = http.HandlerFunc(s.serveProxy)
	h = genericfilters.WithAuthorization(h, authz, codecs)
	h = genericfilters.WithAuthentication(h, authn, genericfilters.Unauthorized(codecs), nil, requestHeader)
	h = genericfilters.WithRequestInfo(h, resolver)
	mux := http.NewServeMux()
	// Discovery and health carry nothing secret and are what the host's
	// aggregator probes (with its client certificate, as no user) to mark
	// the APIService Available, so they are served before authentication.
	mux.HandleFunc("/apis/"+Group+"/"+Version, serveDiscovery)
	mux.HandleFunc("/healthz", serveOK)
	mux.HandleFunc("/readyz", serveOK)
	// The search cache gets the same checks as the host makes before its
	// aggregator forwards (get on search/api or search/apis: may this
	// user use the cache at all), so a request that reaches the server
	// some other way is held to them too; serveSearch then shows only the
	// namespaces the user may list.
	search := SearchHandler(opts.Search, authz)
	search = genericfilters.WithAuthorization(search, authz, codecs)
	search = genericfilters.WithAuthentication(search, authn, genericfilters.Unauthorized(codecs), nil, requestHeader)
	search = genericfilters.WithRequestInfo(search, resolver)
	mux.Handle(SearchPrefix+"/", search)
	mux.Handle("/", h)
	s.handler = mux
	return s, nil
}

// SearchHandler serves the search cache c below SearchPrefix to requests
// whose context already carries an authenticated user (New puts the
// delegated authentication in front of it); authz decides per namespace
// what that user sees. Benchmarks serve it over plain HTTP this way.
func SearchHandler(c *Cache, authz authorizer.Authorizer) http.Handler {
	s := &Server{opts: Options{Search: c}, authz: authz}
	return http.HandlerFunc(s.serveSearch)
}

// Handler is the server's full handler chain, for tests that serve it
// themselves.
func (s *Server) Handler() http.Handler { return s.handler }

// NeedLeaderElection is false: every replica serves the proxy.
func (s *Server) NeedLeaderElection() bool { return false }

// Start loads the host's request-header configuration once (so the first
// request is not refused for want of it), keeps it current, and serves
// until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	for _, run := range s.runFirst {
		if err := run(ctx); err != nil {
			return fmt.Errorf("cluster proxy: read %s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
		}
	}
	for _, run := range s.runners {
		go run(ctx)
	}
	// A certificate read from files reloads when they change (a
	// cert-manager renewal), as k8s.io/apiserver's own servers do.
	if reloading, ok := s.opts.Certificate.(interface{ Run(context.Context, int) }); ok {
		go reloading.Run(ctx, 1)
	}
	ln := s.opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.opts.BindAddress); err != nil {
			return fmt.Errorf("cluster proxy: listen on %s: %w", s.opts.BindAddress, err)
		}
	}
	tlsConfig := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The host's aggregator presents its front-proxy client
		// certificate; the request-header authenticator verifies it.
		ClientAuth: tls.RequestClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			certPEM, keyPEM := s.opts.Certificate.CurrentCertKeyContent()
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			return &cert, err
		},
		NextProtos: []string{"http/1.1"},
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 30 * time.Second, TLSConfig: tlsConfig}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		return nil
	case err := <-errc:
		return fmt.Errorf("cluster proxy: serve: %w", err)
	}
}

func serveOK(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok"))
}

// serveDiscovery answers the group-version discovery: clusters/proxy is
// the one resource.
func serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[`+
		`{"name":"clusters/proxy","singularName":"","namespaced":false,"kind":"ClusterProxyOptions","verbs":["create","delete","get","patch","update"]}]}`,
		GroupVersion.String())
}

// writeError answers err as a Kubernetes Status.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := err.(apierrors.APIStatus); !ok {
		err = apierrors.NewInternalError(err)
	}
	responsewriters.ErrorNegotiated(err, scheme.Codecs, GroupVersion, w, r)
}
