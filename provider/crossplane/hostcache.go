package crossplane

import (
	"crypto/sha256"
	"net/http"

	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// DefaultHostCacheSize bounds the host clients kept at once. Each holds a
// REST mapper filled by discovery and a connection pool, so a tenant who
// creates ProviderConfig after ProviderConfig (each namespaced, each with
// its own kubeconfig) could otherwise grow the provider's memory without
// limit. A provider config pushed out is only slower: its next reconcile
// connects and discovers again.
const DefaultHostCacheSize = 128

// providerConfigKey names one provider config: Kind is ProviderConfig or
// ClusterProviderConfig, Namespace is "" for the latter.
type providerConfigKey struct {
	Kind, Namespace, Name string
}

// hostEntry is the host client of one provider config and the digest of
// the credentials it was built from: other credentials are another client.
type hostEntry struct {
	digest [sha256.Size]byte
	// generation is the provider config's when the client was built.
	generation int64
	client     client.Client
	// interpreters caches the host's resource interpreter for this
	// client, so it goes with the client.
	interpreters *hoststore.Interpreters
	// http is the client's own transport, built uncached (see
	// hostConnector.newHostClient), so closing its idle connections when the
	// entry goes lets the connections and the transport go too.
	http *http.Client
}

// hostCache holds one host client per provider config, least recently used
// first out. It is keyed by the provider config, not by the credentials'
// content: a changed kubeconfig replaces its config's entry instead of
// adding one beside it, and a deleted config's entry is dropped by name
// (forget). Safe for concurrent use.
type hostCache struct {
	lru *lru.Cache
}

func newHostCache(size int) *hostCache {
	if size <= 0 {
		size = DefaultHostCacheSize
	}
	return &hostCache{lru: lru.NewWithEvictionFunc(size, func(_ lru.Key, v any) {
		if e, ok := v.(*hostEntry); ok && e.http != nil {
			e.http.CloseIdleConnections()
		}
	})}
}

// get returns the entry of key when it was built from credentials of
// digest; an entry built from other credentials is dropped.
func (c *hostCache) get(key providerConfigKey, digest [sha256.Size]byte) (*hostEntry, bool) {
	v, ok := c.lru.Get(key)
	if !ok {
		return nil, false
	}
	e, ok := v.(*hostEntry)
	if !ok || e.digest != digest {
		c.lru.Remove(key)
		return nil, false
	}
	return e, true
}

// put records key's client, replacing (and closing) any other; the least
// recently used entry goes when the cache is full.
func (c *hostCache) put(key providerConfigKey, e *hostEntry) {
	// Add replaces a value without the eviction function: remove first so
	// the replaced entry's connections are closed.
	c.lru.Remove(key)
	c.lru.Add(key, e)
}

// forget drops key's client: its provider config was deleted or changed.
func (c *hostCache) forget(key providerConfigKey) {
	c.lru.Remove(key)
}

// forgetIfNot drops key's client unless it was built at generation of its
// provider config. A client dropped by a race with put is built again.
func (c *hostCache) forgetIfNot(key providerConfigKey, generation int64) {
	if v, ok := c.lru.Get(key); ok {
		if e, ok := v.(*hostEntry); !ok || e.generation != generation {
			c.lru.Remove(key)
		}
	}
}

// len is the number of clients held.
func (c *hostCache) len() int { return c.lru.Len() }
