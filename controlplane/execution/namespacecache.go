package execution

import (
	"sync"
	"time"
)

// NamespaceCache remembers, per cluster, the namespaces a call found or
// created, so later calls apply into them without reading each again first:
// a control plane applying one Work at a time would otherwise send every
// member one namespace read per Work. An entry is trusted for its TTL; an
// apply that finds the namespace gone drops the entry, creates the namespace
// again and applies once more. It is safe for concurrent use.
type NamespaceCache struct {
	ttl time.Duration

	mu   sync.Mutex
	seen map[namespaceKey]time.Time
}

type namespaceKey struct{ cluster, namespace string }

// NewNamespaceCache returns an empty cache whose entries last ttl.
func NewNamespaceCache(ttl time.Duration) *NamespaceCache {
	return &NamespaceCache{ttl: ttl, seen: map[namespaceKey]time.Time{}}
}

// known says whether namespace was seen in cluster within the TTL; a nil
// cache knows nothing.
func (c *NamespaceCache) known(cluster, namespace string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := namespaceKey{cluster, namespace}
	at, ok := c.seen[k]
	if ok && time.Since(at) > c.ttl {
		delete(c.seen, k)
		return false
	}
	return ok
}

func (c *NamespaceCache) remember(cluster, namespace string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[namespaceKey{cluster, namespace}] = time.Now()
}

func (c *NamespaceCache) forget(cluster, namespace string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, namespaceKey{cluster, namespace})
}
