// Package metrics defines flotilla's Prometheus metrics, in the spirit of
// Karmada's (scheduling attempts and latency by result, cluster readiness
// and probe latency, per-cluster apply latency and errors, failovers and
// evictions) plus the number of bindings in each state. They are registered
// with controller-runtime's registry, so the manager's metrics endpoint
// serves them beside controller-runtime's own.
//
// The reconcilers (controlplane/controller) record into them; this package
// only defines them and imports nothing of flotilla. The pure core never
// imports it.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label values of the result label.
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
	ResultSuccess       = "success"
)

// Label values of flotilla_failovers_total's type label.
const (
	FailoverCluster     = "cluster"
	FailoverApplication = "application"
)

// memberCluster is Karmada's label for the member a series is about.
const memberCluster = "member_cluster"

// buckets from 1 ms to about 16 s, Karmada's scheduling and sync buckets.
var buckets = prometheus.ExponentialBuckets(0.001, 2, 15)

var (
	// ScheduleAttempts counts scheduling attempts by result: scheduled,
	// unschedulable (no cluster fits) or error.
	ScheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_scheduler_schedule_attempts_total",
		Help: "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding, by result: scheduled, unschedulable (no cluster fits) or error.",
	}, []string{"result"})

	// SchedulingDuration is the time of one scheduling attempt, from
	// reading the clusters to writing the result, by result.
	SchedulingDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_scheduler_e2e_scheduling_duration_seconds",
		Help:    "Time in seconds of one scheduling attempt of a binding, from reading the clusters to writing the result, by result.",
		Buckets: buckets,
	}, []string{"result"})

	// WorkApplyDuration is the time to apply one Work's manifests to its
	// member, by member and result (success or error).
	WorkApplyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_work_apply_duration_seconds",
		Help:    "Time in seconds to apply one Work's manifests to its member cluster, by member_cluster and result (success or error).",
		Buckets: buckets,
	}, []string{memberCluster, "result"})

	// WorkApplyErrors counts failed applies of Works to a member.
	WorkApplyErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_work_apply_errors_total",
		Help: "Number of failed applies of a Work's manifests to its member cluster (refused, not ready or failed), by member_cluster.",
	}, []string{memberCluster})

	// ClusterReady is 1 for a member whose Ready condition is True, else 0.
	ClusterReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_cluster_ready_state",
		Help: "State of the member cluster: 1 if its Ready condition is True, 0 otherwise.",
	}, []string{memberCluster})

	// ClusterProbeDuration is the time of one probe and status collection
	// of a member, by member and result.
	ClusterProbeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_cluster_probe_duration_seconds",
		Help:    "Time in seconds of one probe and status collection of a member cluster, by member_cluster and result (success or error).",
		Buckets: buckets,
	}, []string{memberCluster, "result"})

	// Failovers counts bindings taken off a member by failover: type
	// cluster (an untolerated NoExecute taint) or application (the
	// template stayed unhealthy there).
	Failovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_failovers_total",
		Help: "Number of times a binding was taken off a member cluster by failover, by type (cluster: an untolerated NoExecute taint; application: the template stayed unhealthy) and member_cluster.",
	}, []string{"type", memberCluster})

	// Evictions counts graceful eviction tasks that ended: the evicted copy
	// on the member is removed.
	Evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_evictions_total",
		Help: "Number of graceful eviction tasks that ended, so that the evicted copy is removed from the member cluster, by member_cluster.",
	}, []string{memberCluster})

	// DescheduledReplicas counts the replicas the descheduler took off a
	// member because their pods could not be scheduled there.
	DescheduledReplicas = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_descheduled_replicas_total",
		Help: "Number of replicas the descheduler took off a member cluster's share of a dynamically divided binding because the member's kube-scheduler found their pods unschedulable past the threshold, by member_cluster.",
	}, []string{memberCluster})

	// ClusterRequeues counts the bindings the scheduler queued again
	// because a Cluster changed in a way that can move them; bindings the
	// Cluster cannot move are not counted, nor queued.
	ClusterRequeues = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_scheduler_cluster_requeues_total",
		Help: "Number of bindings queued for scheduling again because a Cluster they are placed on, or that their affinity admits, changed.",
	})

	// RolloutGates counts the gates of staged rollouts judged in
	// continuous mode, by result: passed or failed.
	RolloutGates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_rollout_gates_total",
		Help: "Number of staged-rollout gates judged in continuous mode, by result: passed (the next stage starts) or failed (the rollout halts).",
	}, []string{"result"})

	// MCSExportedEndpoints is the number of endpoint addresses collected
	// onto the host for an exported Service, from every cluster that
	// exports it (those kept from a cluster that cannot be read
	// included).
	MCSExportedEndpoints = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_mcs_exported_endpoints",
		Help: "Number of endpoint addresses collected onto the host for a ServiceExport's Service, from every cluster that exports it, by namespace and service.",
	}, []string{"namespace", "service"})

	// MCSSyncErrors counts the collections of an exported Service's
	// endpoints that could not read a member (its Service, ServiceExport
	// or EndpointSlices), by member.
	MCSSyncErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_mcs_sync_errors_total",
		Help: "Number of collections of a ServiceExport's endpoints that could not read a member cluster (its Service, ServiceExport or EndpointSlices; its last endpoints are kept until it is found not ready), by member_cluster.",
	}, []string{memberCluster})

	bindingsDesc = prometheus.NewDesc("flotilla_resource_bindings",
		"Number of ResourceBindings and ClusterResourceBindings by state (Unscheduled, Unschedulable, Scheduled, FullyApplied), counted from the leader's cache at scrape time.",
		[]string{"state"}, nil)
)

// BindingCounter counts the bindings per state. It returns ok=false where
// this process has nothing to report (a standby replica).
type BindingCounter func(ctx context.Context) (counts map[string]int, ok bool, err error)

// bindings is the collector of flotilla_resource_bindings; the control
// plane sets its counter when it starts.
var bindings = &bindingCollector{}

// SetBindingCounter sets where flotilla_resource_bindings comes from. The
// last control plane set in a process wins (tests run several).
func SetBindingCounter(f BindingCounter) {
	bindings.mu.Lock()
	defer bindings.mu.Unlock()
	bindings.count = f
}

func init() {
	ctrlmetrics.Registry.MustRegister(ScheduleAttempts, SchedulingDuration, WorkApplyDuration, WorkApplyErrors,
		ClusterReady, ClusterProbeDuration, Failovers, Evictions, DescheduledReplicas, ClusterRequeues, RolloutGates, MCSExportedEndpoints, MCSSyncErrors, bindings)
}

// Since is the seconds since start, for Observe.
func Since(start time.Time) float64 { return time.Since(start).Seconds() }
