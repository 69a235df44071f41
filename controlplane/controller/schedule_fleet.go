package controller

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
// Cluster, and recompute its free resources, once per binding; now a
// binding pays for listing the cached Clusters without copying them and
// for hashing their resource versions, and the rest is done once per
// change of any Cluster (issues 20 and 23).
type fleetCache struct {
	mu   sync.Mutex
	view *fleetView
}

// get returns the view of the fleet as the reader sees it now.
func (f *fleetCache) get(ctx context.Context, r client.Reader) (*fleetView, error) {
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
	f.view = v
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
