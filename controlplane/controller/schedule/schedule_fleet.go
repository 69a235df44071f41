package schedule

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// fleetView is one version of the fleet prepared for scheduling: the
// Clusters in the engine's form, by name, and a scheduler Snapshot over
// them. It is shared by every binding scheduled while the fleet is
// unchanged and must not be modified.
type fleetView struct {
	clusters []*api.Cluster
	byName   map[string]*api.Cluster
	snapshot *scheduler.Snapshot
	// version identifies the fleet: the names and resource versions of its
	// Clusters.
	version [sha256.Size]byte
}

// fleetCache keeps the fleetView of the latest fleet version. Scheduling
// 10,000 bindings over 1,000 Clusters used to copy and convert every
// Cluster, and recompute its free resources, once per binding; then a
// binding paid for listing the cached Clusters, sorting and hashing them,
// which was a fifth of the control plane's CPU in a cold start of that
// size; now, once the scheduler's Cluster watch reports changes (track),
// a binding pays for one counter read while no Cluster changes, and the
// rest is done once per change of any Cluster (issues 20 and 23).
type fleetCache struct {
	// changes counts the Cluster events the scheduler's watch has seen;
	// tracked says that the watch reports them.
	changes atomic.Uint64
	tracked atomic.Bool

	mu   sync.Mutex
	view *fleetView
	// viewAt is changes as read before the view's Clusters were listed.
	viewAt uint64
}

// track is a predicate for the scheduler's Cluster watch that counts every
// event, whatever inner decides. The informer has stored a change before
// any of its handlers runs, and this runs before the watch queues a
// binding, so a binding queued for a Cluster change always finds the
// count moved past the view that lacks the change.
func (f *fleetCache) track(inner predicate.Predicate) predicate.Predicate {
	f.tracked.Store(true)
	return predicate.Funcs{
		CreateFunc:  func(ev event.CreateEvent) bool { f.changes.Add(1); return inner.Create(ev) },
		UpdateFunc:  func(ev event.UpdateEvent) bool { f.changes.Add(1); return inner.Update(ev) },
		DeleteFunc:  func(ev event.DeleteEvent) bool { f.changes.Add(1); return inner.Delete(ev) },
		GenericFunc: func(ev event.GenericEvent) bool { f.changes.Add(1); return inner.Generic(ev) },
	}
}

// get returns the view of the fleet as the reader sees it now.
func (f *fleetCache) get(ctx context.Context, r client.Reader) (*fleetView, error) {
	seen := f.changes.Load()
	if f.tracked.Load() {
		f.mu.Lock()
		v, at := f.view, f.viewAt
		f.mu.Unlock()
		if v != nil && at == seen {
			return v, nil
		}
	}
	var list clusterv1.ClusterList
	// The informer cache replaces objects on update and never changes them
	// in place, so reading them without a copy is safe as long as nothing
	// here writes to them: the view is read-only.
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	items := list.Items
	slices.SortFunc(items, func(a, b clusterv1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	version := fleetVersion(items)

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.view != nil && f.view.version == version {
		f.viewAt = seen
		return f.view, nil
	}
	v := &fleetView{
		clusters: make([]*api.Cluster, len(items)),
		byName:   make(map[string]*api.Cluster, len(items)),
		version:  version,
	}
	for i := range items {
		c := items[i].Engine()
		v.clusters[i], v.byName[c.Name] = &c, &c
	}
	v.snapshot = scheduler.NewSnapshot(v.clusters)
	f.view, f.viewAt = v, seen
	return v, nil
}

// fleetVersion hashes the names and resource versions of the Clusters,
// which are sorted by name. A Cluster's resource version changes with any
// change to it, so equal hashes mean the same fleet.
func fleetVersion(items []clusterv1.Cluster) [sha256.Size]byte {
	h := sha256.New()
	for i := range items {
		h.Write([]byte(items[i].Name))
		h.Write([]byte{0})
		h.Write([]byte(items[i].ResourceVersion))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
