package scheduler

import "github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"

// spreadGroups numbers the Snapshot's clusters by their group under one
// spread constraint, so that spread selection groups its candidates by
// number instead of reading each cluster object (out of cache in large
// fleets) and hashing its key, once per decision (issue 23).
type spreadGroups struct {
	// of is each cluster's group number.
	of []int32
	// keys is each group number's key, as groupKey gives it.
	keys []string
}

// maxSpreadGroupings bounds the Snapshot's cache of groupings; only
// policies spreading by many different labels reach it, and the cache then
// starts over.
const maxSpreadGroupings = 64

// groupsBy numbers the clusters by their group under sc, computed on first
// use. groupKey depends on the constraint's label and field only.
func (s *Snapshot) groupsBy(sc *api.SpreadConstraint) *spreadGroups {
	key := [2]string{sc.SpreadByLabel, string(sc.SpreadByField)}
	s.mu.Lock()
	if g, ok := s.groupings[key]; ok {
		s.mu.Unlock()
		return g
	}
	s.mu.Unlock()
	// Computed outside the lock, as selected is.
	g := &spreadGroups{of: make([]int32, len(s.clusters))}
	index := map[string]int32{}
	for i, c := range s.clusters {
		k := groupKey(sc, c)
		id, ok := index[k]
		if !ok {
			id = int32(len(g.keys)) // #nosec G115 -- fewer groups than clusters.
			index[k] = id
			g.keys = append(g.keys, k)
		}
		g.of[i] = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groupings == nil || len(s.groupings) >= maxSpreadGroupings {
		s.groupings = map[[2]string]*spreadGroups{}
	}
	s.groupings[key] = g
	return g
}
