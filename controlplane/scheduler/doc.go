// Package scheduler decides where a resource template goes: which member
// clusters receive it and how many replicas each gets. It owns Karmada's
// scheduling semantics and nothing else.
//
// It is part of the pure core. It must not import client-go,
// controller-runtime or anything that does I/O, reads the clock, uses
// randomness or keeps mutable global state. Schedule is a function of its
// arguments: the same snapshot and binding always give the same result,
// whatever the order of the snapshot.
//
// A caller scheduling many templates over one fleet builds a Snapshot once
// (NewSnapshot) and calls its Schedule: it gives the same results while
// reading each cluster's free resources, name, deletion and taint state,
// and per kind its API enablement, from compact slices computed once. The
// Snapshot's only mutable state is that per-kind cache, filled
// deterministically under a lock.
//
// # Pipeline
//
// Schedule runs, for the placement's cluster affinity (or for each
// ClusterAffinities term in turn), filter → score → select → assign.
//
// Filters are plain functions applied in this order; the first that rejects
// a cluster gives its reason:
//
//  1. the cluster is not being deleted;
//  2. API enablement: a cluster that already runs the template passes
//     (Karmada's APIEnablement.Filter); any other needs the template's
//     apiVersion/kind in status.apiEnablements. A list is trusted only with
//     the condition CompleteAPIEnablements=True. An untrusted list that
//     lacks the kind rejects the cluster unless it reported no APIs at all
//     (flotilla: a cluster declared in Terraform but not probed yet must
//     not block a plan);
//  3. taints: NoSchedule and NoExecute taints must be tolerated by
//     placement.clusterTolerations (Equal and Exists operators). A cluster in
//     the previous result ignores NoSchedule, as in Karmada, but not
//     NoExecute, and with Binding.Now set a NoExecute toleration stops
//     tolerating once its tolerationSeconds have passed since the taint's
//     timeAdded (Karmada's taint manager, NoExecuteUntolerated);
//  4. cluster affinity, through policy.ClusterMatches: exclude first, then
//     labelSelector, fieldSelector and clusterNames. For a ClusterAffinities
//     term the primary group and its overflowAffinities (Karmada v1.18) are
//     tried in order; the first group a cluster matches is its tier;
//  5. spread-field presence: a cluster lacking the provider, region, zone or
//     label a spread constraint groups by is rejected;
//  6. graceful eviction: clusters the template is being evicted from.
//
// Scoring sums plain scorer functions. The only one is locality: clusters in
// the previous result score 100, others 0. Candidates are ordered by tier,
// then score, then capacity (available replicas plus the replicas already
// there), then name.
//
// ClusterAffinities terms are tried in order starting from the term the
// previous result used (Karmada's stickiness), or from the first when Fresh;
// the first term that schedules wins and is reported in Result.AffinityName.
// When none does, the errors of all tried terms are joined, first term first.
//
// # Selection
//
// Without spread constraints every candidate is selected. Static weights
// ignore spread constraints, as in Karmada. Otherwise:
//
//   - By cluster only: the best maxGroups candidates (fewer than minGroups is
//     an error). For Divided workloads whose replicas are divided by capacity
//     the picks must hold the replicas: from the last pick backwards, a pick
//     is swapped for the unpicked candidate with the largest capacity when
//     that is larger, and "no enough resource" is reported when even then
//     they fall short (Karmada's selectClustersByAvailableResource).
//   - By a topology field: region as in Karmada, and, beyond Karmada, also
//     zone, provider and label, which Karmada only filters on. The coarsest
//     such constraint (provider, region, zone, label) groups the candidates;
//     any others are checked on the result. Groups are ordered by their best
//     candidate, then by total capacity and key. Starting from minGroups, the
//     best groups are taken; if their clusters cannot satisfy the cluster
//     constraint's minGroups or hold the replicas, groups are swapped from
//     the last backwards for the strongest unpicked group, and then one more
//     group is taken, up to maxGroups. Within the chosen groups every group
//     gives its best cluster and the rest are filled by preference up to the
//     cluster constraint's maxGroups, with the same capacity swap among the
//     fillers. This replaces Karmada's exhaustive search over region
//     combinations with a polynomial one that agrees with it on the common
//     cases (fewest groups, best score first). The search is bounded: a
//     group count is skipped when even the largest groups could not give
//     the cluster constraint's minGroups or hold the replicas (prefix sums
//     over sizes and capacities), the capacity swap keeps a running total
//     and a heap of the unpicked, and after 32 failed swap passes only
//     maxGroups is tried. One group per cluster at 1,000 clusters selects
//     in milliseconds (BenchmarkScheduleSpreadByLabel).
//
// # Replica assignment
//
// Strategies are chosen from a small map by name:
//
//   - Duplicated (also when replicaScheduling is absent): every selected
//     cluster gets all replicas.
//   - StaticWeight: a cluster's weight is the largest weight among the rules
//     matching it; zero-weight clusters get nothing; if no cluster has a
//     positive weight all weigh 1. Replicas are apportioned by Webster
//     (Sainte-Laguë). It is stateless, as in Karmada; Webster is house
//     monotone so scaling up never takes a replica away.
//   - DynamicWeight (AvailableReplicas) and Aggregated follow Karmada's steady
//     mode: an unchanged count keeps the previous result; a scale-up divides
//     only the new replicas, weighted by what fits in each cluster, and adds
//     them to the previous result (Aggregated offers them to the fewest
//     clusters that hold them, clusters already in use first); a scale-down
//     divides the new count by the previous result (Aggregated keeps only the
//     largest previous clusters that hold it). Fresh divides everything anew
//     weighted by what fits plus what runs. With overflow affinities, new
//     replicas fill each tier up to what fits before spilling into the next,
//     and a scale-down empties the last tier first.
//
// Non-workloads (zero replicas, no replica requirements) go to every
// selected cluster with zero replicas; a workload scaled to zero whose pods
// request resources or constrain nodes goes to no cluster, as in Karmada
// without --enable-empty-workload-propagation. Divided results leave out
// clusters with no replicas.
//
// Webster ties go to the cluster with fewer seats, then by name ascending,
// or descending when the template has a UID whose FNV-1a hash is odd. The
// apportionment bounds the priority of the last seat from the vote total,
// the seat count and the number of clusters, keeps the seats above the
// bound, and ranks the fewer than 2n+2 seats near it by selection, so its
// cost and allocations are linear in the number of clusters and never
// depend on the number of replicas. Aggregated takes the fewest clusters
// that cover the replicas by a weighted selection, without sorting them
// all; the result is ordered by name through the Snapshot's name ranks;
// Result.Reasons is built into a map only when read.
//
// Available replicas are estimated from status.resourceSummary as Karmada's
// general estimator does: allocatable − allocated − allocating per requested
// resource (cpu in millicores), bounded by free pod slots, or from the
// resource model grades when the cluster reports allocatableModelings.
//
// # Failures
//
// Every failure is a *FitError carrying a reason for each cluster of the
// snapshot, so "why not cluster X" always has an answer. A successful Result
// also explains, in Reasons, every cluster it leaves out.
package scheduler
