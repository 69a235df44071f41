package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// unschedulableRetry is how often a binding that no cluster fits is
// scheduled again. Cluster events pass only on changes that can move a
// placement (clusterSchedulingChanged), not on pods freeing capacity.
const unschedulableRetry = 30 * time.Second

// ReasonQuotaExceeded is the Scheduled=False reason of a binding whose
// result would take its namespace over a FederatedResourceQuota, Karmada's
// BindingReasonQuotaExceeded.
const ReasonQuotaExceeded = "QuotaExceeded"

// schedulerReconciler writes each binding's scheduling result.
type schedulerReconciler struct {
	client client.Client
	opts   shared.Options
	now    func() time.Time
	events shared.Recorder
	// members holds each watched member's per-node index (nodeEstimates).
	members *shared.Members
	// fleet is the Clusters prepared for scheduling, shared by the
	// bindings scheduled while no Cluster changes.
	fleet fleetCache
}

func (s *schedulerReconciler) setup(mgr ctrl.Manager) error {
	c, err := ownRateLimitClient(mgr)
	if err != nil {
		return err
	}
	s.client = c
	// Bindings of both kinds are queued by their schedule priority
	// (schedule_priority.go). Several workers take them from the priority
	// queue: controller-runtime v0.25 no longer deadlocks it on shutdown with
	// more than one (kubernetes-sigs/controller-runtime#3538). A binding is
	// never handed to two workers at once, and the fleet view and its
	// Snapshot are safe for concurrent use.
	return ctrl.NewControllerManagedBy(mgr).Named("scheduler").
		// The queue is counted in the backlog that holds downstream writes
		// while it is long (issue 40).
		WithOptions(controller.Options{MaxConcurrentReconciles: s.opts.SchedulerWorkers, UsePriorityQueue: ptr.To(true),
			NewQueue: s.opts.Backlog().PriorityQueue}).
		Watches(&workv1.ResourceBinding{}, bindingsByPriority()).
		Watches(&workv1.ClusterResourceBinding{}, bindingsByPriority()).
		Watches(&clusterv1.Cluster{}, affectedBindingsByPriority(s.client), builder.WithPredicates(s.fleet.track(shared.ClusterSchedulingChanged))).
		// A quota changed, or its usage fell: the bindings it holds back
		// try again.
		Watches(&policyv1.FederatedResourceQuota{}, heldByQuota(s.client)).
		Complete(s)
}

// nodeEstimates is the per-node estimator over the members' informers: a
// cluster whose member is watched and synced answers from its nodes;
// another (a Pull cluster, whose agent reports only the summary, or a
// member not connected yet) has no answer, and the general estimator's
// stands.
func (s *schedulerReconciler) nodeEstimates(req *api.ReplicaRequirements) func(string) (int32, bool) {
	r := estimator.NewRequirement(req)
	return func(cluster string) (int32, bool) {
		if s.members == nil {
			return 0, false
		}
		nodes := s.members.Nodes(cluster)
		if nodes == nil {
			return 0, false
		}
		return nodes.MaxReplicas(r), true
	}
}

// ownRateLimitClient is a host client that reads from the manager's cache
// and writes through REST clients of its own, so under a client-side rate
// limit of its own (--kube-api-qps and --kube-api-burst each): Karmada runs
// its scheduler as a process apart from its controller manager, each with
// its own limit, and here the scheduler's two writes per binding do not
// queue behind the detectors' and the binding controller's writes of the
// same resource (issue 20).
func ownRateLimitClient(mgr ctrl.Manager) (client.Client, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.RateLimiter = nil
	opts := shared.ClientOptions()
	opts.Cache.Reader = mgr.GetCache()
	opts.Scheme, opts.Mapper, opts.HTTPClient = mgr.GetScheme(), mgr.GetRESTMapper(), mgr.GetHTTPClient()
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("host client of the scheduler: %w", err)
	}
	return c, nil
}

// Reconcile schedules one binding over the current Clusters. The previous
// result is the scheduler's input, so an unchanged fleet gives the same
// result and nothing is written.
func (s *schedulerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	if err := shared.GetBinding(ctx, s.client, req.NamespacedName, &rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// An attached binding (a dependency, see deps.go) has no placement of
	// its own: the dependencies distributor writes its clusters.
	// A binding the binding controller refuses is not scheduled either:
	// nothing is rendered from it, and its clusters would only look real.
	if !rb.DeletionTimestamp.IsZero() || rb.Spec.Placement == nil || len(shared.ValidateResourceBinding(&rb, s.opts)) > 0 {
		return reconcile.Result{}, nil
	}
	if cond := otherScheduler(&rb); cond != nil {
		return reconcile.Result{}, s.leave(ctx, &rb, *cond)
	}
	start, outcome := time.Now(), metrics.ResultError
	defer func() { observeSchedule(outcome, start) }()
	fleet, err := s.fleet.get(ctx, s.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	byName := fleet.byName
	engine := rb.Engine()
	binding := scheduler.BindingFor(&engine, *rb.Spec.Placement)
	fresh := rescheduleRequested(&rb)
	binding.Fresh = fresh
	now := s.now()
	binding.Now = now
	quotas, err := shared.LoadNamespaceQuotas(ctx, s.client, &rb)
	if err != nil {
		return reconcile.Result{}, err
	}
	binding.QuotaRoom = quotas.Room(&rb)
	binding.NodeEstimates = s.nodeEstimates
	result, schedErr := fleet.snapshot.Schedule(binding)
	// A result that takes the namespace over a FederatedResourceQuota is
	// not written, nor its generation observed: the binding keeps its
	// previous clusters and Works (none for a new template) until the
	// quota has room, as Karmada's ResourceBinding webhook refuses it.
	var overQuota string
	if schedErr == nil {
		overQuota = quotas.Exceeded(&rb, result.Clusters)
	}

	orig := rb.DeepCopy()
	var requeue time.Duration
	if schedErr == nil && overQuota == "" {
		requeue = tolerationRunsOut(result.Clusters, byName, rb.Spec.Placement.ClusterTolerations, now)
		status, err := shared.LastReported(ctx, s.client, &rb)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("cluster failover of binding %s: %w", req, err)
		}
		tasks, err := shared.EvictionTasks(&rb.Spec, status, result.Clusters, byName, now)
		if err != nil {
			// Moving without the task would lose the preserved state.
			return reconcile.Result{}, fmt.Errorf("cluster failover of binding %s: %w", req, err)
		}
		moved := !equality.Semantic.DeepEqual(result.Clusters, rb.Spec.Clusters)
		if moved || !equality.Semantic.DeepEqual(tasks, rb.Spec.GracefulEvictionTasks) {
			rb.Spec.Clusters, rb.Spec.GracefulEvictionTasks = result.Clusters, tasks
			// The execution reconciler drops tasks concurrently: a lost
			// update would resurrect or forget one.
			if err := shared.PatchBinding(ctx, s.client, &rb, orig, true); err != nil {
				return reconcile.Result{}, fmt.Errorf("write schedule of binding %s: %w", req, err)
			}
			s.failedOver(&rb, orig.Spec.Clusters, byName, now)
			orig = rb.DeepCopy()
		}
		if moved || fresh {
			s.events.Binding(&rb, corev1.EventTypeNormal, shared.EventReasonScheduleBindingSucceed, shared.ActionSchedule, placementNote(result.Clusters))
			at := metav1.NewTime(now)
			rb.Status.LastScheduledTime = &at
			if settle := rescheduleSettle(rb.Spec.RescheduleTriggeredAt, now); settle > 0 && (requeue == 0 || settle < requeue) {
				requeue = settle
			}
		}
	}
	cond := metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Success", Message: "binding is scheduled", ObservedGeneration: rb.Generation}
	if schedErr != nil {
		requeue = unschedulableRetry
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NoClusterFit", schedErr.Error()
		var fit *scheduler.FitError
		if !errors.As(schedErr, &fit) {
			cond.Reason = "SchedulerError"
		}
	} else if overQuota != "" {
		requeue = unschedulableRetry
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonQuotaExceeded, "the template's replicas would exceed "+overQuota
	} else {
		rb.Status.SchedulerObservedAffinityName = result.AffinityName
	}
	cond.LastTransitionTime = metav1.NewTime(now)
	if cond.Status == metav1.ConditionFalse && shared.ConditionMoved(apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled), cond) {
		s.events.Binding(&rb, corev1.EventTypeWarning, shared.EventReasonScheduleBindingFailed, shared.ActionSchedule, cond.Message)
	}
	apimeta.SetStatusCondition(&rb.Status.Conditions, cond)
	if overQuota == "" {
		rb.Status.SchedulerObservedGeneration = rb.Generation
	}
	if !equality.Semantic.DeepEqual(rb.Status, orig.Status) {
		if err := shared.PatchBindingStatus(ctx, s.client, &rb, orig); err != nil {
			return reconcile.Result{}, fmt.Errorf("write status of binding %s: %w", req, err)
		}
	}
	outcome = scheduleOutcome(schedErr)
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// rescheduleRequested reports whether spec.rescheduleTriggeredAt asks for a
// schedule from scratch: it is not older than status.lastScheduledTime.
// Karmada asks for "newer", but both are stored with second precision, so a
// request made in the second of the last schedule would be lost; flotilla
// takes "not older" and, since a fresh schedule of the same fleet gives the
// same result, redoing one within that second is harmless.
func rescheduleRequested(rb *workv1.ResourceBinding) bool {
	t, last := rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime
	return t != nil && (last == nil || !t.Before(last))
}

// rescheduleSettle is how long to wait before scheduling again after a
// schedule at now, so that lastScheduledTime, stored in whole seconds, ends
// up past the reschedule request and the request is served once. Zero when
// it already is.
func rescheduleSettle(triggered *metav1.Time, now time.Time) time.Duration {
	if triggered == nil {
		return 0
	}
	next := triggered.Time.Truncate(time.Second).Add(time.Second)
	if now.Truncate(time.Second).Before(next) {
		return next.Sub(now)
	}
	return 0
}

// leave records that the binding is another scheduler's, as Karmada's
// scheduler skips it (schedulerNameFilter): its clusters stay as they are.
// The observed generation is written all the same, so the binding
// controller renders those clusters (none for a binding never scheduled)
// instead of waiting for a schedule that never comes.
func (s *schedulerReconciler) leave(ctx context.Context, rb *workv1.ResourceBinding, cond metav1.Condition) error {
	orig := rb.DeepCopy()
	cond.LastTransitionTime = metav1.NewTime(s.now())
	apimeta.SetStatusCondition(&rb.Status.Conditions, cond)
	rb.Status.SchedulerObservedGeneration = rb.Generation
	if equality.Semantic.DeepEqual(rb.Status, orig.Status) {
		return nil
	}
	if err := s.client.Status().Patch(ctx, rb, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write status of binding %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	return nil
}

// tolerationRunsOut is how long until the tolerationSeconds of a NoExecute
// toleration run out on a cluster the template is scheduled to, 0 when none
// will: the binding is scheduled again then, as Karmada's taint manager
// queues it for the toleration time, and the cluster is left.
func tolerationRunsOut(scheduled []api.TargetCluster, clusters map[string]*api.Cluster, tolerations []corev1.Toleration, now time.Time) time.Duration {
	var soonest time.Duration
	for _, tc := range scheduled {
		c, ok := clusters[tc.Name]
		if !ok {
			continue
		}
		if _, wait := scheduler.NoExecuteUntolerated(c.Spec.Taints, tolerations, now); wait > 0 && (soonest == 0 || wait < soonest) {
			soonest = wait
		}
	}
	return soonest
}
