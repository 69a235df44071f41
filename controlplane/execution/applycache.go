package execution

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// ApplyCache remembers, per cluster and object, what the last apply sent
// and the resourceVersion it left, so applying the same object again onto
// a member object nobody changed since is skipped: the read before the
// apply is enough to tell. A control plane that applies every Work again at
// each resync, to take back changes made by hand, then writes to a member
// only when something changed there (any change moves the
// resourceVersion). It is safe for concurrent use.
type ApplyCache struct {
	mu      sync.Mutex
	applied map[applyKey]appliedState
}

type applyKey struct{ cluster, object string }

type appliedState struct {
	sent            [sha256.Size]byte
	resourceVersion string
	// fields is render.AppliedFieldsDigest of the applied object: a watch
	// that sees the same digest on it tells that nobody touched what was
	// applied, whatever else (its status) moved its resourceVersion.
	fields string
}

// NewApplyCache returns an empty cache.
func NewApplyCache() *ApplyCache {
	return &ApplyCache{applied: map[applyKey]appliedState{}}
}

// digest hashes the object an apply sends; ok is false when it cannot be
// encoded (nothing is then remembered).
func digest(obj *unstructured.Unstructured) (sum [sha256.Size]byte, ok bool) {
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return sum, false
	}
	return sha256.Sum256(raw), true
}

// unchanged says whether sending obj to cluster would repeat the last
// apply onto the same live object (its resourceVersion unmoved since).
// A nil cache says no.
func (c *ApplyCache) unchanged(cluster string, ref api.TemplateRef, obj, live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	s, found := c.sameSent(cluster, ref, obj)
	return found && s.resourceVersion == live.GetResourceVersion()
}

// unchangedWatched says whether sending obj to cluster would repeat the
// last apply onto an object whose applied fields are, as a watch saw them
// (fields), the ones that apply left. A nil cache or an empty digest says
// no.
func (c *ApplyCache) unchangedWatched(cluster string, ref api.TemplateRef, obj *unstructured.Unstructured, fields string) bool {
	if fields == "" {
		return false
	}
	s, found := c.sameSent(cluster, ref, obj)
	return found && s.fields == fields
}

// sameSent is what the last apply of ref to cluster left, when that apply
// sent obj as it is now; found is false otherwise, and for a nil cache.
func (c *ApplyCache) sameSent(cluster string, ref api.TemplateRef, obj *unstructured.Unstructured) (appliedState, bool) {
	if c == nil {
		return appliedState{}, false
	}
	sum, ok := digest(obj)
	if !ok {
		return appliedState{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, found := c.applied[applyKey{cluster, ref.String()}]
	return s, found && s.sent == sum
}

// remember records that obj was applied to cluster, leaving applied.
func (c *ApplyCache) remember(cluster string, ref api.TemplateRef, obj, applied *unstructured.Unstructured, manager string) {
	if c == nil {
		return
	}
	sum, ok := digest(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	k := applyKey{cluster, ref.String()}
	if !ok {
		delete(c.applied, k)
		return
	}
	c.applied[k] = appliedState{sent: sum, resourceVersion: applied.GetResourceVersion(), fields: render.AppliedFieldsDigest(applied.GetManagedFields(), manager)}
}

// forget drops what is remembered of ref in cluster.
func (c *ApplyCache) forget(cluster string, ref api.TemplateRef) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.applied, applyKey{cluster, ref.String()})
}
