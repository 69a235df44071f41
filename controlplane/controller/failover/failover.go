package failover

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Karmada's values for the eviction tasks of application failover, so that a
// Karmada user reads the same binding.
const (
	EvictionReasonApplicationFailure = "ApplicationFailure"
	// EvictionProducerApplicationFailover is Karmada's
	// RBApplicationFailoverControllerName.
	EvictionProducerApplicationFailover = "resource-binding-application-failover-controller"
)

// AnnotationUnhealthySince is the binding annotation that records, per
// cluster, since when the template has been Unhealthy there (a JSON object of
// cluster name to RFC 3339 time). Karmada keeps this in memory, so a restart
// or a new leader starts every toleration again; flotilla keeps it on the
// binding so that a control plane restarting more often than the toleration
// still fails over.
const AnnotationUnhealthySince = "failover.flotilla.io/unhealthy-since"

// applicationFailover returns the application failover behaviour of a
// binding, or nil when it has none.
func applicationFailover(spec *api.ResourceBindingSpec) *api.ApplicationFailoverBehavior {
	if spec.Failover == nil {
		return nil
	}
	return spec.Failover.Application
}

// toleration is decisionConditions.tolerationSeconds, Karmada's 300 s when unset.
func toleration(app *api.ApplicationFailoverBehavior) time.Duration {
	s := api.DefaultTolerationSeconds
	if t := app.DecisionConditions.TolerationSeconds; t != nil {
		s = *t
	}
	return time.Duration(s) * time.Second
}

// failoverDecision is the outcome of one look at a binding's health.
type failoverDecision struct {
	// since is the unhealthy-since record to keep.
	since map[string]time.Time
	// evict are the clusters whose toleration has run out, sorted.
	evict []string
	// wait is how long until the next toleration runs out; zero when none runs.
	wait time.Duration
}

// decideApplicationFailover is Karmada's application failover decision. A
// scheduled cluster that reports the template Unhealthy starts a clock; one
// that stays Unhealthy past the toleration is evicted. Healthy ends the
// clock. Unknown (status not collected, cluster unreachable) neither starts
// nor ends one, so that a gap in status collection does not reset it, as in
// Karmada; an unreachable cluster is the cluster failover's business.
// Clusters that are no longer scheduled or already under eviction are
// forgotten. since is the previous record; it is not modified.
func decideApplicationFailover(spec *api.ResourceBindingSpec, status []api.AggregatedStatusItem, since map[string]time.Time, now time.Time) failoverDecision {
	d := failoverDecision{since: map[string]time.Time{}}
	app := applicationFailover(spec)
	if app == nil {
		return d
	}
	tol := toleration(app)
	for _, tc := range spec.Clusters {
		if evictingFrom(spec, tc.Name) {
			continue
		}
		i := slices.IndexFunc(status, func(it api.AggregatedStatusItem) bool { return it.ClusterName == tc.Name })
		if i < 0 {
			continue
		}
		at, seen := since[tc.Name]
		switch status[i].Health {
		case api.ResourceUnhealthy:
			if !seen {
				at = now
			}
		case api.ResourceUnknown, "":
			if !seen {
				continue
			}
			d.since[tc.Name] = at
			continue
		default:
			continue
		}
		d.since[tc.Name] = at
		if left := at.Add(tol).Sub(now); left > 0 {
			if d.wait == 0 || left < d.wait {
				d.wait = left
			}
			continue
		}
		d.evict = append(d.evict, tc.Name)
	}
	sort.Strings(d.evict)
	// An evicted cluster leaves spec.clusters, so its record goes with it.
	for _, c := range d.evict {
		delete(d.since, c)
	}
	return d
}

// evictingFrom reports whether spec has a graceful eviction task for cluster.
func evictingFrom(spec *api.ResourceBindingSpec, cluster string) bool {
	return slices.ContainsFunc(spec.GracefulEvictionTasks, func(t api.GracefulEvictionTask) bool { return t.FromCluster == cluster })
}

// applicationPurgeMode is the purge mode of an application failover task,
// with the deprecated spellings mapped to the current ones and Gracefully
// when unset (Karmada's default).
func applicationPurgeMode(app *api.ApplicationFailoverBehavior) api.PurgeMode {
	switch app.PurgeMode {
	case "", api.PurgeModeGraciously:
		return api.PurgeModeGracefully
	case api.PurgeModeImmediately:
		return api.PurgeModeDirectly
	}
	return app.PurgeMode
}

// gracefulEvictCluster is Karmada's ResourceBindingSpec.GracefulEvictCluster
// for application failover: the cluster leaves spec.clusters, which makes
// the scheduler place its replicas elsewhere (it skips clusters under
// eviction), and a task records the eviction unless one exists. The task
// follows the policy's purge mode: Directly ends at once, Gracefully keeps
// the old copy until the new clusters are healthy or gracePeriodSeconds
// (else the controller's timeout) pass, Never keeps it until someone sets
// suppressDeletion to false. preserved is the state carried to the new
// cluster (preservedLabelState), nil for none.
func gracefulEvictCluster(spec *api.ResourceBindingSpec, cluster string, now time.Time, preserved map[string]string) {
	i := slices.IndexFunc(spec.Clusters, func(tc api.TargetCluster) bool { return tc.Name == cluster })
	if i < 0 {
		return
	}
	app := applicationFailover(spec)
	before := make([]string, len(spec.Clusters))
	for j, tc := range spec.Clusters {
		before[j] = tc.Name
	}
	evicted := spec.Clusters[i]
	spec.Clusters = slices.Delete(slices.Clone(spec.Clusters), i, i+1)
	if len(spec.Clusters) == 0 {
		spec.Clusters = nil
	}
	if app == nil || evictingFrom(spec, cluster) {
		return
	}
	created := metav1.NewTime(now)
	task := api.GracefulEvictionTask{
		FromCluster:            cluster,
		PurgeMode:              applicationPurgeMode(app),
		Reason:                 EvictionReasonApplicationFailure,
		Message:                fmt.Sprintf("the template has been unhealthy on cluster %s for longer than %v", cluster, toleration(app)),
		Producer:               EvictionProducerApplicationFailover,
		ClustersBeforeFailover: before,
		PreservedLabelState:    preserved,
		CreationTimestamp:      &created,
	}
	if evicted.Replicas > 0 {
		r := evicted.Replicas
		task.Replicas = &r
	}
	switch task.PurgeMode {
	case api.PurgeModeGracefully:
		task.GracePeriodSeconds = app.GracePeriodSeconds
	case api.PurgeModeNever:
		suppress := true
		task.SuppressDeletion = &suppress
	}
	spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
}

// parseUnhealthySince reads AnnotationUnhealthySince. A malformed value is
// reported and read as no record, which only delays a failover.
func parseUnhealthySince(annotations map[string]string) (map[string]time.Time, error) {
	raw, ok := annotations[AnnotationUnhealthySince]
	if !ok || raw == "" {
		return nil, nil
	}
	var stored map[string]string
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationUnhealthySince, err)
	}
	out := make(map[string]time.Time, len(stored))
	for cluster, s := range stored {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: cluster %s: %w", AnnotationUnhealthySince, cluster, err)
		}
		out[cluster] = t
	}
	return out, nil
}

// formatUnhealthySince is the annotation value of a record; "" when empty.
// encoding/json sorts map keys, so equal records give equal strings.
func formatUnhealthySince(since map[string]time.Time) string {
	if len(since) == 0 {
		return ""
	}
	stored := make(map[string]string, len(since))
	for cluster, t := range since {
		stored[cluster] = t.UTC().Format(time.RFC3339Nano)
	}
	// A map of strings always marshals.
	raw, _ := json.Marshal(stored)
	return string(raw)
}
