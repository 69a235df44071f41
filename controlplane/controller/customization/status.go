package customization

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// customizationEventBuffer is how many customization reports wait for the
// customization status controller; one more is dropped, and reported on
// the customization's next change.
const customizationEventBuffer = 256

// actionInterpret is the events' action of the customization reports.
const actionInterpret = "Interpret"

// customizationStatus reports on each ResourceInterpreterCustomization
// what the controllers' interpreter cache knows: its Ready condition says
// whether its scripts loaded and whether a call ran out of a budget, which
// refuses its kind until it changes, and a Warning Event says so when it
// becomes False. The cache tells it (Interpreters.Notify) when a report
// may have changed.
type customizationStatus struct {
	client       client.Client
	interpreters *hoststore.Interpreters
	events       shared.Recorder
	changed      chan event.GenericEvent
}

// Setup registers the customization status controller with mgr and sets
// the cache's Notify to queue it; it is called before the manager starts,
// so no controller loads a customization before Notify is set.
func Setup(mgr manager.Manager, is *hoststore.Interpreters, events shared.Recorder) error {
	s := &customizationStatus{client: mgr.GetClient(), interpreters: is, events: events, changed: make(chan event.GenericEvent, customizationEventBuffer)}
	is.Notify = func(name string) {
		ric := &configv1.ResourceInterpreterCustomization{}
		ric.Name = name
		select {
		case s.changed <- event.GenericEvent{Object: ric}:
		default:
		}
	}
	return ctrl.ControllerManagedBy(mgr).Named("customization-status").
		For(&configv1.ResourceInterpreterCustomization{}).
		WatchesRawSource(source.Channel(s.changed, &handler.EnqueueRequestForObject{})).
		Complete(s)
}

// Reconcile writes one customization's Ready condition.
func (s *customizationStatus) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var ric configv1.ResourceInterpreterCustomization
	if err := s.client.Get(ctx, req.NamespacedName, &ric); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// Loading reads every customization and loads what changed; the
	// report below is then about the current generation.
	if _, err := s.interpreters.Load(ctx, s.client); err != nil {
		return reconcile.Result{}, err
	}
	cond, ok := readyCondition(&ric, s.interpreters.Report(&ric))
	if !ok {
		// Still loading: the cache notifies when it is done.
		return reconcile.Result{}, nil
	}
	prev := apimeta.FindStatusCondition(ric.Status.Conditions, cond.Type)
	if prev != nil && prev.Status == cond.Status && prev.Reason == cond.Reason && prev.Message == cond.Message && prev.ObservedGeneration == cond.ObservedGeneration {
		return reconcile.Result{}, nil
	}
	moved := shared.ConditionMoved(prev, cond)
	orig := ric.DeepCopy()
	apimeta.SetStatusCondition(&ric.Status.Conditions, cond)
	if err := s.client.Status().Patch(ctx, &ric, client.MergeFrom(orig)); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("write status of resource interpreter customization %s: %w", ric.Name, err)
	}
	if moved && cond.Status == metav1.ConditionFalse {
		s.events.Object(&ric, corev1.EventTypeWarning, cond.Reason, actionInterpret, cond.Message)
	}
	return reconcile.Result{}, nil
}

// readyCondition is the Ready condition of a report, and false while the
// customization's kind is still loading.
func readyCondition(ric *configv1.ResourceInterpreterCustomization, r hoststore.CustomizationReport) (metav1.Condition, bool) {
	gvk := schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
	cond := metav1.Condition{Type: configv1.ConditionReady, ObservedGeneration: ric.Generation}
	switch {
	case r.Exceeded != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, configv1.ReasonBudgetExceeded
		cond.Message = fmt.Sprintf("%s %s is refused until this customization changes: a call of its %s script ran out of a budget: %v",
			gvk.GroupVersion(), gvk.Kind, r.Exceeded.Operation, r.Exceeded.Err)
	case r.Refusal != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, configv1.ReasonRefused
		cond.Message = fmt.Sprintf("%s %s is refused: %v", gvk.GroupVersion(), gvk.Kind, r.Refusal)
	case r.Loaded:
		cond.Status, cond.Reason = metav1.ConditionTrue, configv1.ReasonLoaded
		cond.Message = fmt.Sprintf("the scripts for %s %s loaded", gvk.GroupVersion(), gvk.Kind)
	default:
		return cond, false
	}
	return cond, true
}
