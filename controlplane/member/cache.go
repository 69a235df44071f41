package member

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

// DefaultProbeTimeout bounds Client.Probe when CacheOptions sets no timeout.
const DefaultProbeTimeout = 5 * time.Second

// DefaultRequestTimeout bounds every request to a member when CacheOptions
// sets no RequestTimeout. Nothing flotilla sends a member is a watch or a
// long-running request, so a member that takes longer is stalled, and one
// stalled member must not hold a worker (or a Terraform run) forever.
const DefaultRequestTimeout = 30 * time.Second

// DefaultDiscoveryInterval is how long a watching cache (CacheOptions.Watch)
// trusts a member's last API discovery at most when CacheOptions sets no
// DiscoveryInterval. Within it the discovery is reused only while the
// member's discovery documents keep their ETags; a member that changed,
// reconnects, or whose last discovery was partial, is discovered again at
// once.
const DefaultDiscoveryInterval = 5 * time.Minute

// CacheOptions configures a Cache.
type CacheOptions struct {
	// ProbeTimeout bounds each Client.Probe; default DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// ConnectTimeout, when set below ProbeTimeout, bounds the part of a
	// probe spent getting a connection (TCP and TLS handshakes, after any
	// credential plugin ran): a member whose port accepts but whose
	// apiserver is frozen, or whose network drops packets, is not connected
	// after it, while one that is connected keeps the whole ProbeTimeout to
	// answer. Zero leaves ProbeTimeout alone, as the control plane does.
	ConnectTimeout time.Duration
	// RequestTimeout bounds each request to a member, from dial to the
	// last byte of the answer (rest.Config.Timeout); default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Watch is for long-running users (the control plane, the pull-mode
	// agent): CollectStatus then keeps each member's node and resource
	// summaries from informers (started on the member's first summary,
	// stopped when its client is replaced or invalidated) instead of listing
	// nodes and pods every time, and discovers its APIs again only when
	// their discovery documents changed (ETags), every DiscoveryInterval,
	// or after it reconnects. Such a client also watches the EndpointSlices
	// of the namespaces multi-cluster services ask about
	// (Client.EndpointSlices), and only those.
	Watch bool
	// DiscoveryInterval is how long a watching cache trusts a member's last
	// complete API discovery; default DefaultDiscoveryInterval.
	DiscoveryInterval time.Duration
	// EndpointSliceIdle is how long a watching cache keeps a member
	// namespace's EndpointSlice informer (Client.EndpointSlices) after the
	// last call for it; default DefaultEndpointSliceIdle.
	EndpointSliceIdle time.Duration
	// AppliedIdle is how long a watching cache keeps the watch of one
	// applied resource (Client.WatchApplied) after the last call for it;
	// default DefaultAppliedIdle.
	AppliedIdle time.Duration
}

// Cache is the one owner of member connections: it builds each member's
// Client once and hands the same one out until the member's connection
// changes. It is safe for concurrent use.
type Cache struct {
	opts CacheOptions

	mu      sync.Mutex
	entries map[string]*cacheEntry
	// slices is the handler of watched EndpointSlice changes
	// (OnEndpointSlices).
	slices atomic.Pointer[SliceHandler]
}

type cacheEntry struct {
	key    [sha256.Size]byte
	client *Client
}

// NewCache returns an empty cache.
func NewCache(opts CacheOptions) *Cache {
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.DiscoveryInterval <= 0 {
		opts.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if opts.EndpointSliceIdle <= 0 {
		opts.EndpointSliceIdle = DefaultEndpointSliceIdle
	}
	if opts.AppliedIdle <= 0 {
		opts.AppliedIdle = DefaultAppliedIdle
	}
	return &Cache{opts: opts, entries: map[string]*cacheEntry{}}
}

// Get returns the client of the member called name, building it when the
// cache has none or conn differs from the connection it was built from (for
// a kubeconfig file, a change of the file's contents counts). Building
// contacts no server, so Get succeeds for an unreachable member; Probe tells
// whether it answers. A connection that cannot be built leaves the cached
// client, if any, in place.
func (c *Cache) Get(ctx context.Context, name string, conn Connection) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connect to cluster %s: %w", name, err)
	}
	key := conn.cacheKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok && e.key == key {
		return e.client, nil
	}
	client, err := newClient(name, conn, c.opts, c.sliceHandler(name))
	if err != nil {
		return nil, fmt.Errorf("connect to cluster %s: %w", name, err)
	}
	if old, ok := c.entries[name]; ok {
		// The connection changed (new credentials, say): the old client's
		// connections must not outlive it.
		old.client.close()
	}
	c.entries[name] = &cacheEntry{key: key, client: client}
	return client, nil
}

// Invalidate drops the client of the member called name, so the next Get
// builds a new one, stops its informers and closes its idle connections.
// Use it when a member was removed from the fleet, so its credentials leave
// memory with it, or when its clients must start afresh (new CRDs are learnt
// without it).
func (c *Cache) Invalidate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok {
		e.client.close()
		delete(c.entries, name)
	}
}

// Len is the number of members the cache holds clients for.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// cacheKey hashes everything that shapes the client, secrets included (the
// hash stays in memory), and the contents of a kubeconfig file.
func (c Connection) cacheKey() [sha256.Size]byte {
	h := sha256.New()
	// Connection holds only strings, byte slices, a bool and a pointer to
	// a struct of the same, all of which encoding/json handles.
	_ = json.NewEncoder(h).Encode(c)
	// InlineOnly is not in the JSON form; a client built without it must
	// not be handed out once it is set.
	if c.InlineOnly {
		h.Write([]byte("\x00inline-only"))
	}
	if c.KubeconfigPath != "" {
		if path, err := expandHome(c.KubeconfigPath); err == nil {
			// A file that cannot be read hashes as empty; building the
			// client then fails and nothing is cached.
			data, _ := os.ReadFile(path)
			h.Write(data)
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// Client holds the clients of one member cluster, all sharing one HTTP
// client and connection pool. Its fields are fixed once built; it is safe for
// concurrent use.
type Client struct {
	// Name is the member's name in the fleet.
	Name string
	// Host is the apiserver URL.
	Host string
	// Kubernetes is the typed clientset.
	Kubernetes kubernetes.Interface
	// Dynamic is the dynamic client, for any kind.
	Dynamic dynamic.Interface
	// Discovery is a discovery client cached in memory; call Invalidate on
	// it to see API changes.
	Discovery discovery.CachedDiscoveryInterface
	// Mapper maps kinds to resources. It learns lazily, per API group, and
	// asks the member again on a miss, so a CRD installed after the client
	// was built is found without a restart.
	Mapper apimeta.RESTMapper

	config       *rest.Config
	http         *http.Client
	fingerprint  string
	probeTimeout time.Duration
	// connectTimeout is CacheOptions.ConnectTimeout.
	connectTimeout time.Duration
	secrets        secrets
	// watch keeps the summaries when the cache watches members; nil
	// otherwise.
	watch *summaryWatch
	// slices keeps the EndpointSlices of the namespaces asked for when the
	// cache watches members; nil otherwise.
	slices *sliceWatch
	// applied watches the applied objects of the
	// resources asked for when the cache watches members; nil otherwise.
	applied *appliedWatch
	// listed is the per-node index of the last status collection that
	// listed nodes and pods (Nodes).
	listed atomic.Pointer[estimator.Nodes]
	// discovered is the last complete API discovery, kept for a watching
	// cache's DiscoveryInterval.
	discovered discoveryCache
}

// newClient builds a member's clients. It makes no request. A watching
// client tells notify of every change to the EndpointSlices it watches.
func newClient(name string, conn Connection, opts CacheOptions, notify func(*discoveryv1.EndpointSlice)) (*Client, error) {
	cfg, s, err := conn.restConfig()
	if err != nil {
		return nil, err
	}
	fp, err := fingerprint(cfg)
	if err != nil {
		return nil, s.scrub(err)
	}
	cfg.Timeout = opts.RequestTimeout
	if cfg.Proxy == nil {
		// client-go keeps transports with the same TLS settings in a
		// process-wide cache that never forgets one; a transport holding a
		// client key would outlive its Cluster. A Proxy function (the same
		// environment proxy client-go uses by default) makes the transport
		// this client's own, so Invalidate can let it go.
		cfg.Proxy = http.ProxyFromEnvironment
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("build HTTP client: %w", err))
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("build clientset: %w", err))
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("build dynamic client: %w", err))
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("build discovery client: %w", err))
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("build REST mapper: %w", err))
	}
	c := &Client{
		Name:           name,
		Host:           cfg.Host,
		Kubernetes:     kube,
		Dynamic:        dyn,
		Discovery:      memory.NewMemCacheClient(disco),
		Mapper:         mapper,
		config:         cfg,
		http:           httpClient,
		fingerprint:    fp,
		probeTimeout:   opts.ProbeTimeout,
		connectTimeout: opts.ConnectTimeout,
		secrets:        s,
	}
	if opts.Watch {
		c.watch = newSummaryWatch(kube)
		c.slices = newSliceWatch(kube, opts.EndpointSliceIdle, notify)
		c.applied = newAppliedWatch(dyn, opts.AppliedIdle)
		c.discovered.interval = opts.DiscoveryInterval
	}
	return c, nil
}

// close stops the client's informers, if any, and closes its idle
// connections; requests still under way finish on their own.
// client-go wraps the transport in round trippers that do not pass
// CloseIdleConnections on, so it is unwrapped to the *http.Transport.
func (c *Client) close() {
	utilnet.CloseIdleConnectionsFor(c.http.Transport)
	if c.watch != nil {
		// The watches' connections turn idle once the informers return.
		summaries, slices, applied := c.watch.stop(), c.slices.stop(), c.applied.stop()
		go func() {
			<-summaries
			<-slices
			<-applied
			utilnet.CloseIdleConnectionsFor(c.http.Transport)
		}()
	}
}

// RESTConfig returns a copy of the member's *rest.Config, for clients this
// package does not build (a controller-runtime client, say). Its String
// method redacts the credentials; never log its fields.
func (c *Client) RESTConfig() *rest.Config { return rest.CopyConfig(c.config) }

// HTTPClient is the member's one HTTP client, which every client this
// package builds shares: a client built elsewhere with RESTConfig and this
// reuses the member's connections (closed with the member) instead of
// opening a transport of its own.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Fingerprint is Connection.Fingerprint of the connection the client was
// built from.
func (c *Client) Fingerprint() string { return c.fingerprint }

// Peek returns the client the cache holds for the member called name,
// without building one: readers that have no connection of their own (the
// scheduler's per-node estimator) use what the cluster status controller
// connected.
func (c *Cache) Peek(name string) (*Client, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok {
		return nil, false
	}
	return e.client, true
}

// Nodes is the member's nodes and their pods' requests, for the per-node
// replica estimator and the resource modelings: kept by the watching
// cache's informers (CacheOptions.Watch) while they are synced and
// healthy, else as of the last status collection that listed them (a
// client that does not watch, such as the Terraform provider's); nil when
// there is neither.
func (c *Client) Nodes() *estimator.Nodes {
	if c.watch != nil {
		if index := c.watch.nodesIndex(); index != nil {
			return index
		}
	}
	return c.listed.Load()
}

// Pods is the member's pods by their controller, for the descheduler: kept
// by the watching cache's informers while they are synced and healthy; nil
// otherwise (a client that does not watch, or a member not yet synced).
func (c *Client) Pods() *estimator.Pods {
	if c.watch == nil {
		return nil
	}
	return c.watch.ownedIndex()
}
