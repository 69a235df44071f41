package cronfederatedhpa

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Reasons of the controller's events, Karmada's where Karmada has one.
const (
	// reasonScaleSucceeded (Normal): a rule scaled its target.
	reasonScaleSucceeded = "ScaleSucceeded"
	// reasonScaleFailed (Warning): a rule's scaling failed; the history
	// has the message.
	reasonScaleFailed = "ScaleFailed"
	// reasonStartRuleFailed (Warning): a rule's schedule or time zone
	// cannot be read, so it never runs.
	reasonStartRuleFailed = "StartRuleFailed"
	actionScale           = "Scale"
)

// reconciler runs the rules of CronFederatedHPAs.
type reconciler struct {
	client client.Client
	opts   shared.Options
	clock  clock.WithDelayedExecution
	rec    shared.Recorder
	// wake is fed by the timers; the controller watches it.
	wake   chan event.GenericEvent
	timers *timers
}

// Reconcile runs the rules that are due, records them, and arms the timer
// for the next.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cron autoscalingv1.CronFederatedHPA
	if err := r.client.Get(ctx, req.NamespacedName, &cron); err != nil {
		if shared.IsNotFound(err) {
			r.timers.set(req.NamespacedName, nil)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get cronfederatedhpa %s: %w", req.NamespacedName, err)
	}
	if !cron.DeletionTimestamp.IsZero() {
		r.timers.set(req.NamespacedName, nil)
		return ctrl.Result{}, nil
	}
	now := r.clock.Now()
	status, dues, bad, next := plan(cron.Spec, cron.Status, now)
	for _, b := range bad {
		r.rec.Object(&cron, corev1.EventTypeWarning, reasonStartRuleFailed, actionScale, b.message)
	}
	for _, d := range dues {
		at := &metav1.Time{Time: d.at}
		err := r.scale(ctx, &cron, d.rule)
		if err != nil {
			msg := fmt.Sprintf("rule %s: %v", d.rule.Name, err)
			record(cron.Spec, &status, d.rule.Name, nil, &api.FailedExecution{ScheduleTime: at, ExecutionTime: &metav1.Time{Time: now}, Message: msg})
			r.rec.Object(&cron, corev1.EventTypeWarning, reasonScaleFailed, actionScale, msg)
			continue
		}
		record(cron.Spec, &status, d.rule.Name, &api.SuccessfulExecution{ScheduleTime: at, ExecutionTime: &metav1.Time{Time: now},
			AppliedReplicas: d.rule.TargetReplicas, AppliedMinReplicas: d.rule.TargetMinReplicas, AppliedMaxReplicas: d.rule.TargetMaxReplicas}, nil)
		r.rec.Object(&cron, corev1.EventTypeNormal, reasonScaleSucceeded, actionScale, describe(&cron, d.rule))
	}
	if !apiequality.Semantic.DeepEqual(status, cron.Status) {
		cron.Status = status
		if err := r.client.Status().Update(ctx, &cron); err != nil {
			// The due rules run again on the retry: scaling to the same
			// replicas writes nothing, and the history is recorded then.
			return ctrl.Result{}, fmt.Errorf("update status of cronfederatedhpa %s: %w", req.NamespacedName, err)
		}
	}
	r.arm(req.NamespacedName, next)
	return ctrl.Result{}, nil
}

// arm sets the CronFederatedHPA's one timer to wake the controller at
// next (none when next is zero).
func (r *reconciler) arm(key client.ObjectKey, next time.Time) {
	if next.IsZero() {
		r.timers.set(key, nil)
		return
	}
	obj := &autoscalingv1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	d := max(next.Sub(r.clock.Now()), 0)
	r.timers.set(key, r.clock.AfterFunc(d, func() {
		// Not from the clock's goroutine: a full queue must not hold it.
		go func() { r.wake <- event.GenericEvent{Object: obj} }()
	}))
}

// describe is the message of a successful scaling.
func describe(cron *autoscalingv1.CronFederatedHPA, rule api.CronFederatedHPARule) string {
	ref := cron.Spec.ScaleTargetRef
	target := fmt.Sprintf("%s %s/%s", ref.Kind, cron.Namespace, ref.Name)
	if rule.TargetReplicas != nil {
		return fmt.Sprintf("rule %s: %s scaled to %d replicas", rule.Name, target, *rule.TargetReplicas)
	}
	msg := fmt.Sprintf("rule %s: %s", rule.Name, target)
	if rule.TargetMinReplicas != nil {
		msg += fmt.Sprintf(" minReplicas %d", *rule.TargetMinReplicas)
	}
	if rule.TargetMaxReplicas != nil {
		msg += fmt.Sprintf(" maxReplicas %d", *rule.TargetMaxReplicas)
	}
	return msg
}
