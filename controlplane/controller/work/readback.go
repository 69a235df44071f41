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

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// appliedVersions answers from the member's watch of the applied objects
// which resourceVersion of an object it last saw
// (member.Client.AppliedVersion); found is false when the watch does not
// hold the object, ok false when the watch cannot tell.
type appliedVersions interface {
	AppliedVersion(gvr schema.GroupVersionResource, namespace, name string) (resourceVersion string, found, ok bool)
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
// the version read: a resourceVersion names one state of an object, so the
// read would return what the Work already reports. It is safe for
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

// unchanged reports whether reading w's objects back from cluster would
// tell nothing new: w reports them Available for its generation from a
// read-back by the same interpreter, and the member's watch holds every
// object at the resourceVersion that read-back saw, and the Work's manifest
// statuses are the ones it wrote. Anything else (an object the watch does
// not hold, a watch not synced or failing, another Work of the same name, a
// changed customization, a status someone else wrote) is read from the
// member.
func (s *workStatus) unchanged(ctx context.Context, cluster string, w *workv1.Work, objs []*unstructured.Unstructured, in *interpret.Interpreter) bool {
	avail := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkAvailable)
	if avail == nil || avail.Status != metav1.ConditionTrue || avail.Reason != api.ReasonWorkAvailable || avail.ObservedGeneration != w.Generation {
		return false
	}
	s.reads.mu.Lock()
	last, ok := s.reads.last[types.NamespacedName{Namespace: w.Namespace, Name: w.Name}]
	s.reads.mu.Unlock()
	if !ok || last.uid != w.UID || last.generation != w.Generation || last.interp != in || len(last.versions) != len(objs) ||
		last.statuses != statusesDigest(w.Status.ManifestStatuses) {
		return false
	}
	target, err := s.members.Connect(ctx, cluster)
	if err != nil {
		return false
	}
	watch, ok := target.Watched.(appliedVersions)
	if !ok {
		return false
	}
	for i, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := target.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false
		}
		rv, found, ok := watch.AppliedVersion(m.Resource, obj.GetNamespace(), obj.GetName())
		if !ok || !found || rv == "" || rv != last.versions[i] {
			return false
		}
	}
	return true
}
