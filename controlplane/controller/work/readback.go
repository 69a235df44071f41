package work

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// appliedObjects answers from the member's watch of the applied objects
// what it last saw of an object (member.Client.AppliedObject); found is
// false when the watch does not hold the object, ok false when the watch
// cannot tell.
type appliedObjects interface {
	AppliedObject(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, found, ok bool)
}

// readBack is what the last complete read-back of a Work saw: the Work it
// read (UID and generation), the interpreter that turned the objects into
// statuses, each object's resourceVersion in manifest order, and a digest
// of the manifest statuses it reported.
type readBack struct {
	uid        types.UID
	generation int64
	interp     *interpret.Interpreter
	versions   []string
	statuses   [sha256.Size]byte
}

// statusesDigest is the digest of a Work's manifest statuses: a status
// written by anyone else than the last read-back (the execution's report
// of an apply, or a hand edit) differs from it and is read again.
func statusesDigest(statuses []api.ManifestStatus) [sha256.Size]byte {
	raw, err := json.Marshal(statuses)
	if err != nil {
		// Never equal to a digest of marshalled statuses: read again.
		return [sha256.Size]byte{1}
	}
	return sha256.Sum256(raw)
}

// readBacks remembers the last complete read-back of each Work, so the
// status backstop (StatusResync) and a watch event for a change already
// read send no member GET while the member's watch holds every object at
// the version read (a resourceVersion names one state of an object, so the
// read would return what the Work already reports), and a watch event for
// a new change is read from the watch's copy (fromWatch). It is safe for
// concurrent use.
type readBacks struct {
	mu   sync.Mutex
	last map[types.NamespacedName]readBack
}

func newReadBacks() *readBacks {
	return &readBacks{last: map[types.NamespacedName]readBack{}}
}

// remember records a complete read-back of w; forget drops it (the Work
// is gone, or its read-back failed or found an object missing).
func (r *readBacks) remember(w *workv1.Work, in *interpret.Interpreter, seen observation) {
	rb := readBack{uid: w.UID, generation: w.Generation, interp: in, versions: seen.versions, statuses: statusesDigest(seen.statuses)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[types.NamespacedName{Namespace: w.Namespace, Name: w.Name}] = rb
}

func (r *readBacks) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
}

// fromWatch reads w's objects in cluster from the member's watch instead
// of the member, when that tells at least as much as a read: w reports
// them Available for its generation from a read-back by the same
// interpreter, its manifest statuses are the ones that read-back wrote,
// and the member's watch holds every object at that read's
// resourceVersion or a later one (resourceversion.CompareResourceVersion).
// The read-back came after the Work's current spec was applied, so a copy
// no older than it is no older than the apply. same says every copy is at
// the version read (nothing to tell). ok false (an object the watch does
// not hold or holds at an older version, a watch not synced or failing, an
// incomparable version, another Work of the same name, a changed
// customization, a status someone else wrote) sends the read to the
// member.
func (s *workStatus) fromWatch(ctx context.Context, cluster string, w *workv1.Work, objs []*unstructured.Unstructured, in *interpret.Interpreter) (live []*unstructured.Unstructured, same, ok bool) {
	avail := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkAvailable)
	if avail == nil || avail.Status != metav1.ConditionTrue || avail.Reason != api.ReasonWorkAvailable || avail.ObservedGeneration != w.Generation {
		return nil, false, false
	}
	s.reads.mu.Lock()
	last, ok := s.reads.last[types.NamespacedName{Namespace: w.Namespace, Name: w.Name}]
	s.reads.mu.Unlock()
	if !ok || last.uid != w.UID || last.generation != w.Generation || last.interp != in || len(last.versions) != len(objs) ||
		last.statuses != statusesDigest(w.Status.ManifestStatuses) {
		return nil, false, false
	}
	target, err := s.members.Connect(ctx, cluster)
	if err != nil {
		return nil, false, false
	}
	watch, ok := target.Watched.(appliedObjects)
	if !ok {
		return nil, false, false
	}
	same = true
	live = make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := target.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, false, false
		}
		held, found, ok := watch.AppliedObject(m.Resource, obj.GetNamespace(), obj.GetName())
		if !ok || !found {
			return nil, false, false
		}
		if c, err := resourceversion.CompareResourceVersion(held.GetResourceVersion(), last.versions[i]); err != nil || c < 0 {
			// Older than the last read (the watch lags behind it), or
			// not comparable: only the member can tell.
			return nil, false, false
		} else if c > 0 {
			same = false
		}
		live[i] = held
	}
	return live, same, true
}
