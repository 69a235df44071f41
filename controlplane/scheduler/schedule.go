package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Schedule decides where the binding's template goes and how many replicas
// each cluster gets. It is a pure function of its arguments: clusters is the
// snapshot of member clusters (it is not modified) and the same input always
// gives the same Result.
//
// A failure is a *FitError (use errors.As) that gives a reason for every
// cluster. With ClusterAffinities every term that was tried contributes one;
// the first tried term's error comes first.
func Schedule(clusters []*api.Cluster, b Binding) (Result, error) {
	return schedule(clusters, nil, b)
}

// schedule is Schedule with, when snap is not nil, each cluster's facts
// read from snap instead of from the cluster.
func schedule(clusters []*api.Cluster, snap *Snapshot, b Binding) (Result, error) {
	if b.Replicas < 0 {
		return Result{}, fmt.Errorf("schedule %s: replicas %d is negative", api.TemplateRefOfResource(b.Resource).Describe(), b.Replicas)
	}
	name, err := strategyOf(&b.Placement)
	if err != nil {
		return Result{}, fmt.Errorf("schedule %s: %w", api.TemplateRefOfResource(b.Resource).Describe(), err)
	}
	s := &run{
		clusters: clusters,
		binding:  &b,
		strategy: name,
		previous: make(map[string]int32, len(b.Previous)),
		evicting: make(map[string]bool, len(b.EvictingClusters)),
		order:    tieOrderFor(b.Resource.UID),
		buf:      getScratch(),
	}
	defer s.buf.release()
	if snap != nil {
		s.snap, s.facts = snap, snap.facts
		s.served = snap.served(b.Resource.APIVersion, b.Resource.Kind)
	}
	for _, tc := range b.Previous {
		s.previous[tc.Name] += tc.Replicas
	}
	for _, n := range b.EvictingClusters {
		s.evicting[n] = true
	}

	terms := b.Placement.ClusterAffinities
	if len(terms) == 0 {
		var groups []*api.ClusterAffinity
		if b.Placement.ClusterAffinity != nil {
			groups = []*api.ClusterAffinity{b.Placement.ClusterAffinity}
		}
		return s.scheduleTerm("", groups, []string{"spec.placement.clusterAffinity"})
	}

	start := 0
	if !b.Fresh {
		for i := range terms {
			if terms[i].AffinityName == b.PreviousAffinityName {
				start = i
				break
			}
		}
	}
	var errs []error
	for i := start; i < len(terms); i++ {
		groups := s.termGroups(&terms[i])
		paths := make([]string, len(groups))
		for k := range paths {
			paths[k] = fmt.Sprintf("spec.placement.clusterAffinities[%d]", i)
			if k > 0 {
				paths[k] += fmt.Sprintf(".overflowAffinities[%d]", k-1)
			}
		}
		res, err := s.scheduleTerm(terms[i].AffinityName, groups, paths)
		if err == nil {
			return res, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return Result{}, errs[0]
	}
	return Result{}, errors.Join(errs...)
}

// run is the state of one Schedule call.
type run struct {
	clusters []*api.Cluster
	// snap is the Snapshot being scheduled over, if any.
	snap *Snapshot
	// facts, when not nil, are each cluster's facts, computed once per
	// Snapshot.
	facts []clusterFacts
	// served, with facts, is what each cluster serves of the template's
	// kind.
	served   []apiState
	binding  *Binding
	strategy string
	previous map[string]int32
	evicting map[string]bool
	order    tieOrder
	// buf holds the decision's working slices.
	buf *scratch
}

// termGroups lists a ClusterAffinities term's primary group followed by its
// overflow groups. Overflow only applies to workloads whose replicas are
// divided by capacity (dynamic weight, Aggregated); everything else, like
// non-workloads in Karmada, uses the primary group only. (Karmada relies on
// its webhook to reject overflow groups with other strategies and would
// otherwise, for instance, duplicate a workload into every tier.)
func (s *run) termGroups(term *api.ClusterAffinityTerm) []*api.ClusterAffinity {
	groups := []*api.ClusterAffinity{&term.ClusterAffinity}
	if s.binding.Replicas > 0 && usesAvailability(s.strategy) {
		for i := range term.OverflowAffinities {
			groups = append(groups, &term.OverflowAffinities[i].ClusterAffinity)
		}
	}
	return groups
}

// scheduleTerm runs filter → score → select → assign for one affinity term;
// paths are where each group is in the policy, for messages.
func (s *run) scheduleTerm(affinityName string, groups []*api.ClusterAffinity, paths []string) (Result, error) {
	b := s.binding
	fc := &filterContext{binding: b, previous: s.previous, evicting: s.evicting, groups: groups, buf: s.buf}
	if s.snap != nil && groups != nil {
		fc.selected = make([][]bool, len(groups))
		for i, g := range groups {
			fc.selected[i] = s.snap.selected(g)
		}
	}

	// What the estimate needs is prepared before filtering: each cluster
	// that passes is scored and estimated at once, while its object is
	// still in cache. Without a Snapshot, a second pass over thousands of
	// clusters read every object from memory again and cost as much as the
	// first (issue 40).
	plan := spreadPlan{}
	if !ignoresSpread(s.strategy) {
		plan = planSpread(b.Placement.SpreadConstraints)
		if s.snap != nil && plan.group != nil {
			plan.groups = s.snap.groupsBy(plan.group)
		}
	}
	spreading := plan.cluster != nil || plan.group != nil
	sets := wholeSets(b)
	r := rater{estimate: (b.Replicas > 0 || sets) && (usesAvailability(s.strategy) || spreading), sets: sets}
	if r.estimate && !sets {
		r.est = newEstimator(b.ReplicaRequirements)
		if b.NodeEstimates != nil {
			r.perNode = b.NodeEstimates(b.ReplicaRequirements)
		}
	}

	// Filter, score and estimate.
	rejected := reuse(s.buf.rejected, 0)
	cands := reuse(s.buf.cands, len(s.clusters))
	for i, c := range s.clusters {
		if s.facts != nil {
			fc.facts, fc.served, fc.index = &s.facts[i], s.served[i], i
		}
		name := fc.name(c)
		if why, ok := runFilters(fc, c); !ok {
			rejected = append(rejected, rejection{name, why})
			continue
		}
		cands = append(cands, candidate{cluster: c, clusterName: name, index: int32(i), tier: fc.tier,
			previous: s.previous[name]})
		s.rate(&r, fc, &cands[len(cands)-1])
	}
	s.buf.rejected, s.buf.cands = rejected, cands
	if len(cands) == 0 {
		known := make([]string, len(rejected))
		for i, r := range rejected {
			known[i] = r.name
		}
		return Result{}, &FitError{Stage: StageFilter, AffinityName: affinityName,
			NumAllClusters: len(s.clusters), Reasons: reasonMap(rejected, nil),
			Policy: b.Policy, Unknown: unknownClusters(groups, paths, known)}
	}
	estimate, perNode := r.estimate, r.perNode
	if spreading {
		cands = s.sortCandidates(cands)
	}

	// Select.
	need := int64(-1)
	switch {
	case b.Replicas > 0 && usesAvailability(s.strategy):
		need = int64(b.Replicas)
	case sets && usesAvailability(s.strategy):
		// One complete set, as Karmada's SelectBestClusters is asked for.
		need = 1
	}
	selected, err := s.buf.selectClusters(cands, plan, need)
	if err != nil {
		return Result{}, s.fitError(StageSelect, affinityName, err, cands, rejected, estimate)
	}

	// Assign. Karmada's AssignReplicas sends a zero-replica template to every
	// selected cluster only when it has no requirements; with requirements it
	// is assigned like any workload and every cluster, holding zero replicas,
	// is then dropped (removeZeroReplicasCluster), whatever the strategy,
	// Duplicated included. Its default --enable-empty-workload-propagation
	// =false does not add them back.
	var counts []int32
	switch {
	case b.Replicas == 0 && HasRequirements(b.ReplicaRequirements):
		// A workload scaled to zero: no cluster.
		counts = zeroed(s.buf.result, len(selected))
		s.buf.result = counts
	case b.Replicas == 0:
		// Every selected cluster, with no replicas.
	default:
		a := &assignment{binding: b, snap: s.snap, strategy: s.strategy, selected: selected, order: s.order, buf: s.buf}
		counts, err = strategies[s.strategy](a)
		if err != nil {
			return Result{}, s.fitError(StageAssign, affinityName, err, cands, rejected, estimate)
		}
	}
	out := s.targets(selected, counts)
	s.buf.left = s.leftOut(cands, selected, counts, len(out))
	why := make([]rejection, 0, len(rejected)+len(s.buf.left))
	why = append(append(why, rejected...), s.buf.left...)
	return Result{Clusters: out, AffinityName: affinityName, Reasons: Reasons{list: why}, NodeLimited: nodeLimited(selected, counts, perNode)}, nil
}

// rater is how one affinity term scores and estimates its candidates.
type rater struct {
	// estimate says whether available replicas are estimated at all;
	// sets, whether as complete sets of components.
	estimate, sets bool
	// est is the general estimator and perNode the per-node one, if any.
	est     *estimator
	perNode func(string) (int32, bool)
}

// rate scores a candidate that passed the filters and estimates the
// replicas it has room for; fc is still on the candidate's cluster.
func (s *run) rate(r *rater, fc *filterContext, cand *candidate) {
	b, c := s.binding, cand.cluster
	for _, sc := range scorers {
		cand.score += sc(fc, c)
	}
	switch {
	case !r.estimate:
		return
	case r.sets:
		// Per-node figures and quotas count replicas of one shape;
		// a set of components is not one.
		cand.available = int64(componentSets(c, b.Components))
		return
	case s.facts != nil:
		cand.available = int64(r.est.availableFrom(fc.facts, c))
	default:
		cand.available = int64(r.est.available(c))
	}
	// Resource models grade the nodes: a smaller answer than the summed
	// free resources is a per-node limit too. Over a Snapshot its facts
	// say which clusters have modelings, so the others are not read.
	if s.facts == nil || fc.facts.models {
		if wide, ok := r.est.bySummary(c); ok && wide > cand.available {
			cand.clusterWide = wide
		}
	}
	if r.perNode != nil {
		if n, ok := r.perNode(cand.clusterName); ok && int64(n) < cand.available {
			cand.clusterWide, cand.available = max(cand.clusterWide, cand.available), int64(n)
		}
	}
	if room, ok := b.QuotaRoom[cand.clusterName]; ok {
		cand.available = max(0, min(cand.available, room))
	}
}

// nodeLimited lists the chosen clusters whose room the per-node estimate,
// or their resource models, made smaller than their summed free resources
// would, sorted by name. perNode is the decision's per-node estimator (nil
// without one): a cluster it gives no answer for was limited by its
// models.
func nodeLimited(selected []candidate, counts []int32, perNode func(string) (int32, bool)) []NodeLimit {
	var out []NodeLimit
	for i := range selected {
		if selected[i].clusterWide > 0 && counts != nil && counts[i] > 0 {
			l := NodeLimit{Cluster: selected[i].name(), PerNode: int32(selected[i].available), ClusterWide: clampInt32(selected[i].clusterWide), Models: true}
			if perNode != nil {
				_, answered := perNode(l.Cluster)
				l.Models = !answered
			}
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b NodeLimit) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out
}

// targets lists the selected clusters, with their replicas when counts
// (by position in selected) is set, leaving out those with none, sorted by
// name. Over a Snapshot with unique names a long result is ordered by the
// names' ranks in linear time; otherwise by comparing names.
func (s *run) targets(selected []candidate, counts []int32) []api.TargetCluster {
	n := 0
	for i := range selected {
		if counts == nil || counts[i] > 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]api.TargetCluster, 0, n)
	target := func(i int) api.TargetCluster {
		if counts == nil {
			return api.TargetCluster{Name: selected[i].name()}
		}
		return api.TargetCluster{Name: selected[i].name(), Replicas: counts[i]}
	}
	// The ranks are computed once per Snapshot; a short result is sorted
	// as cheaply by its names.
	var rank []int32
	if s.snap != nil && n*8 >= len(s.clusters) {
		rank, _ = s.snap.ranks()
	}
	if rank == nil {
		for i := range selected {
			if counts == nil || counts[i] > 0 {
				out = append(out, target(i))
			}
		}
		sortTargets(out)
		return out
	}
	// at[r] is 1 + the position in selected of the cluster ranked r.
	at := zeroed(s.buf.at, len(rank))
	s.buf.at = at
	for i := range selected {
		if counts == nil || counts[i] > 0 {
			at[rank[selected[i].index]] = int32(i + 1) // #nosec G115 -- fewer selected than clusters.
		}
	}
	for _, i := range at {
		if i > 0 {
			out = append(out, target(int(i-1)))
		}
	}
	return out
}

// sortCandidates orders the candidates by preference, by radix on the
// Snapshot's name ranks when it can, otherwise by comparison.
func (s *run) sortCandidates(cands []candidate) []candidate {
	if s.snap != nil {
		if rank, bits := s.snap.ranks(); rank != nil {
			if sorted, ok := s.buf.sortByRanks(cands, rank, bits); ok {
				return sorted
			}
		}
	}
	sortCandidates(cands)
	return cands
}

// rejection is a cluster left out and why.
type rejection struct {
	name, why string
}

// reasonMap turns rejections into a map by cluster name; nil when there
// are none.
func reasonMap(lists ...[]rejection) map[string]string {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for _, l := range lists {
		for _, r := range l {
			m[r.name] = r.why
		}
	}
	return m
}

// leftOut explains, in the decision's scratch, every feasible cluster that
// is not among the placed clusters: the selected ones given replicas by
// counts (by position in selected; all of them when counts is nil), placed
// of them. It marks clusters by their index, in linear time.
func (s *run) leftOut(cands, selected []candidate, counts []int32, placed int) []rejection {
	left := s.buf.left[:0]
	if placed == len(cands) {
		return left
	}
	const isPicked, isPlaced = 1, 2
	marks := zeroed(s.buf.marks, len(s.clusters))
	s.buf.marks = marks
	for i := range selected {
		m := uint8(isPicked)
		if counts == nil || counts[i] > 0 {
			m |= isPlaced
		}
		marks[selected[i].index] = m
	}
	left = slices.Grow(left, len(cands)-placed)
	for i := range cands {
		switch marks[cands[i].index] {
		case isPicked | isPlaced:
		case isPicked:
			left = append(left, rejection{cands[i].name(), "assigned no replicas"})
		default:
			left = append(left, rejection{cands[i].name(), "not selected by the spread constraints"})
		}
	}
	return left
}

// runFilters applies the filters in order and returns the first rejection.
func runFilters(fc *filterContext, c *api.Cluster) (string, bool) {
	for _, f := range filters {
		if ok, why := f(fc, c); !ok {
			return why, false
		}
	}
	return "", true
}

// ignoresSpread reports whether spread constraints are ignored for the
// strategy: Karmada ignores them for static weights, which name their
// clusters explicitly.
func ignoresSpread(strategy string) bool {
	return strategy == strategyStaticWeight
}

// fitError wraps a select or assign failure with a reason per cluster:
// filtered clusters keep their filter reason, feasible ones say what the
// scheduler knew about them.
func (s *run) fitError(stage Stage, affinityName string, err error, cands []candidate,
	rejected []rejection, estimated bool) *FitError {
	feasible := make([]rejection, len(cands))
	for i := range cands {
		why := "feasible"
		if estimated {
			why = fmt.Sprintf("feasible, room for %d more replicas", cands[i].available)
			if wholeSets(s.binding) {
				why = fmt.Sprintf("feasible, room for %d complete sets of its components", cands[i].available)
			}
			if cands[i].previous > 0 {
				why += fmt.Sprintf(" besides the %d it runs", cands[i].previous)
			}
			if room, ok := s.binding.QuotaRoom[cands[i].name()]; ok && room == cands[i].available {
				why += " (as its FederatedResourceQuota assignment allows)"
			}
		}
		feasible[i] = rejection{cands[i].name(), why}
	}
	return &FitError{Stage: stage, AffinityName: affinityName, NumAllClusters: len(s.clusters),
		Message: err.Error(), Reasons: reasonMap(rejected, feasible)}
}
