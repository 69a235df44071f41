package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// workStatus reads each applied Work's objects back from its member into
// status.manifestStatuses (reflected status and health, per Karmada's
// interpretation in controlplane/health) and the Available condition, every
// Options.Resync.
type workStatus struct {
	client   client.Client
	executor *execution.Executor
	members  execution.Connector
	opts     shared.Options
	now      func() time.Time
	// slots keeps a stalled member from taking every worker.
	slots *memberSlots
	// agent is set in a pull-mode agent, which observes the Works of its
	// own Pull cluster; the control plane observes only Push clusters.
	agent bool
	// watches, when set, tells events of changes to the objects the
	// Works applied, selected by selector (statuswatch.go).
	watches  shared.AppliedWatcher
	selector string
	events   *statusEvents
	// reads is each Work's last complete read-back, which spares the
	// member a GET while its watch shows nothing changed (readback.go).
	reads *readBacks
}

func (s *workStatus) setup(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("work-status").
		For(&workv1.Work{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(ev event.UpdateEvent) bool {
				oldW, ok1 := ev.ObjectOld.(*workv1.Work)
				newW, ok2 := ev.ObjectNew.(*workv1.Work)
				return !ok1 || !ok2 || statusTrigger(oldW, newW)
			},
		})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: s.opts.WorkStatusWorkers,
			ReconciliationTimeout:   s.opts.WorkTimeout + shared.HostWriteMargin,
		})
	if err := s.setupWatches(mgr, b, s.executor); err != nil {
		return fmt.Errorf("set up work status watches: %w", err)
	}
	return b.Complete(s)
}

// statusTrigger says whether a Work update needs the work status
// controller: a new generation, or a change of its Applied condition (the
// execution's verdict, which a read-back waits for). Its own writes
// (manifest statuses, Available) do not once the Work is available: each
// would read the member again for nothing, doubling the reads of every
// status change.
func statusTrigger(oldW, newW *workv1.Work) bool {
	if oldW.Generation != newW.Generation || !newW.DeletionTimestamp.Equal(oldW.DeletionTimestamp) ||
		!equalBool(oldW.Spec.SuspendDispatching, newW.Spec.SuspendDispatching) {
		return true
	}
	if !apimeta.IsStatusConditionTrue(newW.Status.Conditions, api.ConditionWorkAvailable) && !equality.Semantic.DeepEqual(oldW.Status, newW.Status) {
		// Not available yet, or an object was missing: the execution's
		// report of a (re)apply is worth a read-back at once.
		return true
	}
	was := apimeta.FindStatusCondition(oldW.Status.Conditions, api.ConditionWorkApplied)
	is := apimeta.FindStatusCondition(newW.Status.Conditions, api.ConditionWorkApplied)
	if was == nil || is == nil {
		return was != is
	}
	return was.Status != is.Status || was.ObservedGeneration != is.ObservedGeneration || was.Reason != is.Reason
}

// equalBool compares two optional booleans, nil counting as false.
func equalBool(a, b *bool) bool { return (a != nil && *a) == (b != nil && *b) }

// Reconcile observes one Work's objects in its member. A Work is observed
// only once its current spec is applied, so what it reports is never the
// object as it was before the apply.
func (s *workStatus) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster, ok := shared.ClusterOfNamespace(req.Namespace)
	if !ok {
		return reconcile.Result{}, nil
	}
	var w workv1.Work
	if err := s.client.Get(ctx, req.NamespacedName, &w); err != nil {
		if apierrors.IsNotFound(err) {
			s.reads.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() || (w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching) {
		s.reads.forget(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	applied := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != w.Generation {
		// The execution controller's next status write brings the Work back.
		return reconcile.Result{}, nil
	}
	var cl clusterv1.Cluster
	if err := s.client.Get(ctx, client.ObjectKey{Name: cluster}, &cl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if shared.IsPull(&cl) != s.agent {
		return reconcile.Result{}, nil
	}
	orig := w.DeepCopy()
	cond := metav1.Condition{Type: api.ConditionWorkAvailable, ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(s.now())}
	objs, decodeErr := shared.Manifests(&w)
	state := unwatched
	if notReady := clusterNotReady(&cl); notReady != "" && !s.agent {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, api.ReasonClusterNotReady, notReady
	} else if decodeErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, api.ReasonWorkObserveFailed, decodeErr.Error()
	} else {
		var statuses []api.ManifestStatus
		skipped := false
		busy, err := onMember(ctx, s.slots, cluster, s.opts.WorkTimeout, func(ctx context.Context) error {
			// Watched before the read: a change after it is told.
			state = s.watch(ctx, cluster, objs)
			in, err := s.opts.Interpreters().Load(ctx, s.client)
			if err != nil {
				cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, api.ReasonWorkObserveFailed, err.Error()
				return err
			}
			var seen observation
			var live []*unstructured.Unstructured
			same, held := false, false
			if state == watched {
				live, same, held = s.fromWatch(ctx, cluster, &w, objs, in)
			}
			switch {
			case held && same:
				skipped = true
				return nil
			case held:
				// A change the watch delivered: its copy is read, the
				// member is not.
				seen = s.observeHeld(ctx, cluster, objs, live, in)
			default:
				seen, err = s.observe(ctx, cluster, objs, in)
			}
			statuses, cond.Status, cond.Reason, cond.Message = seen.statuses, seen.status, seen.reason, seen.message
			if cond.Reason == api.ReasonWorkAvailable {
				s.reads.remember(&w, in, seen)
			} else {
				s.reads.forget(req.NamespacedName)
			}
			return err
		})
		if busy {
			return reconcile.Result{RequeueAfter: memberBusyRetry}, nil
		}
		if skipped {
			// The member's watch holds every object as the last
			// read-back saw it: the Work's status stands as it is.
			return s.resyncFor(watched), nil
		}
		if err != nil {
			// The message names the timeout when it was the cause.
			cond.Message = err.Error()
		}
		if cond.Reason != api.ReasonWorkObserveFailed {
			// An object that could not be read keeps its last report.
			w.Status.ManifestStatuses = statuses
		}
	}
	apimeta.SetStatusCondition(&w.Status.Conditions, cond)
	if err := patchWorkStatus(ctx, s.client, orig, &w); err != nil {
		return reconcile.Result{}, err
	}
	if cond.Reason != api.ReasonWorkAvailable && state == watched {
		// A missing object or a failed read is looked at again after
		// the resync, as before; a watch still syncing is waited for.
		state = unwatched
	}
	return s.resyncFor(state), nil
}

// observation is what one read-back found: the objects' statuses, the
// Available condition's status, reason and message, and each object's
// resourceVersion (complete only when every object was read).
type observation struct {
	statuses []api.ManifestStatus
	status   metav1.ConditionStatus
	reason   string
	message  string
	versions []string
}

// observe reads the objects back through in; the error is the message
// again when an object could not be read.
func (s *workStatus) observe(ctx context.Context, cluster string, objs []*unstructured.Unstructured, in *interpret.Interpreter) (observation, error) {
	reqs := make([]execution.ObserveRequest, len(objs))
	for i, obj := range objs {
		reqs[i] = execution.ObserveRequest{Cluster: cluster, Object: obj}
	}
	var seen observation
	var missing, failures []string
	for i, obs := range s.executor.ObserveLive(ctx, reqs) {
		ref := api.TemplateRefOf(objs[i])
		switch {
		case obs.Err != nil:
			failures = append(failures, obs.Err.Error())
		case obs.NotFound:
			missing = append(missing, fmt.Sprintf("%s not found in cluster %s", ref.Describe(), cluster))
		default:
			seen.statuses = append(seen.statuses, s.manifestStatus(ctx, in, cluster, i, ref, obs.Live))
			seen.versions = append(seen.versions, obs.Live.GetResourceVersion())
		}
	}
	switch {
	case len(failures) > 0:
		seen.message = strings.Join(failures, "; ")
		seen.status, seen.reason = metav1.ConditionFalse, api.ReasonWorkObserveFailed
		return seen, errors.New(seen.message)
	case len(missing) > 0:
		seen.status, seen.reason, seen.message = metav1.ConditionFalse, api.ReasonWorkNotFound, strings.Join(missing, "; ")
		return seen, nil
	}
	seen.status, seen.reason, seen.message = metav1.ConditionTrue, api.ReasonWorkAvailable, availableMessage(cluster)
	return seen, nil
}

// observeHeld is observe over copies of every object that the member's
// watch holds (fromWatch): each exists, so the Work is Available.
func (s *workStatus) observeHeld(ctx context.Context, cluster string, objs, live []*unstructured.Unstructured, in *interpret.Interpreter) observation {
	seen := observation{status: metav1.ConditionTrue, reason: api.ReasonWorkAvailable, message: availableMessage(cluster)}
	for i, obj := range live {
		seen.statuses = append(seen.statuses, s.manifestStatus(ctx, in, cluster, i, api.TemplateRefOf(objs[i]), obj))
		seen.versions = append(seen.versions, obj.GetResourceVersion())
	}
	return seen
}

// availableMessage is the Available condition's message when every object
// of a Work exists in its cluster.
func availableMessage(cluster string) string { return "manifests exist in cluster " + cluster }

// manifestStatus is one object's entry in status.manifestStatuses. The
// status is what controlplane/health reflects; for kinds whose status
// carries observedGeneration, the member object's generation is added (as
// Karmada does) so aggregation can tell when the member caught up.
func (s *workStatus) manifestStatus(ctx context.Context, in *interpret.Interpreter, cluster string, ordinal int, ref api.TemplateRef, live *unstructured.Unstructured) api.ManifestStatus {
	return observedManifestStatus(ctx, s.members, in, cluster, ordinal, ref, live)
}

// observedManifestStatus is manifestStatus for any holder of the members'
// clients (the execution controller reports what its apply returned).
func observedManifestStatus(ctx context.Context, members execution.Connector, in *interpret.Interpreter, cluster string, ordinal int, ref api.TemplateRef, live *unstructured.Unstructured) api.ManifestStatus {
	h, msg := in.InterpretHealth(live)
	ms := api.ManifestStatus{
		Identifier:    api.ResourceIdentifier{Ordinal: ordinal, Group: ref.Group, Version: ref.Version, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Resource: resourceOf(ctx, members, cluster, ref)},
		Health:        api.ResourceHealth(h),
		HealthMessage: msg,
	}
	status, err := in.ReflectStatus(live)
	if err != nil {
		// The health already carries the customization's failure when
		// it is refused; a failing reflection alone is logged.
		ctrl.LoggerFrom(ctx).Info("status cannot be reflected", "cluster", cluster, "object", ref.String(), "reason", err.Error())
	}
	if _, ok := status["observedGeneration"]; ok {
		status[shared.StatusGeneration] = live.GetGeneration()
	}
	if status != nil {
		if raw, err := json.Marshal(status); err == nil {
			ms.Status = &runtime.RawExtension{Raw: raw}
		}
	}
	return ms
}

// resourceOf is the plural resource name of ref in cluster; empty when the
// member's mapper cannot tell.
func resourceOf(ctx context.Context, members execution.Connector, cluster string, ref api.TemplateRef) string {
	target, err := members.Connect(ctx, cluster)
	if err != nil {
		return ""
	}
	m, err := target.Mapper.RESTMapping(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Version)
	if err != nil {
		return ""
	}
	return m.Resource.Resource
}
