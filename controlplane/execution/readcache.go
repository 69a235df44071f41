package execution

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// readPageSize bounds one page of a cached LIST.
const readPageSize = 500

// ReadCache lets ObserveLive answer reads from one LIST per cluster, kind
// and namespace of the objects that carry the fleet's label, instead of one
// GET per object. A Terraform refresh reads every manifest in every member
// at once: a hundred manifests in ten members were a thousand GETs, and
// now are ten LISTs. An object the LIST does not hold (deleted, or its
// labels removed) is read with a GET, so an observation says the same as
// without the cache; what the cache adds is that the objects of one list
// are as old as that list. Lists are kept for TTL, and Reset drops them
// all: whoever writes to members through the same cache resets it after
// each write. It is safe for concurrent use.
type ReadCache struct {
	ttl   time.Duration
	mu    sync.Mutex
	lists map[readKey]*readList
}

type readKey struct {
	cluster   string
	kind      schema.GroupVersionKind
	namespace string
}

// readList is one LIST, shared by every read that waits for it.
type readList struct {
	done  chan struct{}
	at    time.Time
	items map[string]*unstructured.Unstructured
	err   error
}

// NewReadCache returns a cache whose lists are reused for ttl.
func NewReadCache(ttl time.Duration) *ReadCache {
	return &ReadCache{ttl: ttl, lists: map[readKey]*readList{}}
}

// Reset forgets every list.
func (c *ReadCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists = map[readKey]*readList{}
}

// get returns a copy of the named object from the list of key, listing it
// first when no fresh list is kept. ok is false when the list does not
// hold the object or could not be taken: the caller reads it itself.
func (c *ReadCache) get(ctx context.Context, key readKey, client dynamic.ResourceInterface, fleet, name string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	l, found := c.lists[key]
	if found && l.expired(c.ttl) {
		found = false
	}
	if !found {
		l = &readList{done: make(chan struct{}), at: time.Now()}
		c.lists[key] = l
	}
	c.mu.Unlock()
	if !found {
		l.items, l.err = listFleet(ctx, client, fleet)
		close(l.done)
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, false
	}
	obj, ok := l.items[name]
	if l.err != nil || !ok {
		return nil, false
	}
	return obj.DeepCopy(), true
}

// expired reports whether a finished list is older than ttl. A list still
// being taken is never expired: its readers wait for it.
func (l *readList) expired(ttl time.Duration) bool {
	select {
	case <-l.done:
		return time.Since(l.at) > ttl
	default:
		return false
	}
}

// listFleet lists the objects of the fleet, by name.
func listFleet(ctx context.Context, client dynamic.ResourceInterface, fleet string) (map[string]*unstructured.Unstructured, error) {
	items := map[string]*unstructured.Unstructured{}
	opts := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{render.LabelFleet: fleet}).String(), Limit: readPageSize}
	for {
		list, err := client.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			items[list.Items[i].GetName()] = &list.Items[i]
		}
		if list.GetContinue() == "" {
			return items, nil
		}
		opts.Continue = list.GetContinue()
	}
}
