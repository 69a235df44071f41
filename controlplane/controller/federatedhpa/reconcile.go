package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1alpha1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// Reasons of the controller's events, Karmada's.
const (
	reasonSuccessfulRescale = "SuccessfulRescale"
	reasonFailedRescale     = "FailedRescale"
	reasonFailedGetScale    = "FailedGetScale"
	reasonFailedGetBinding  = "FailedGetBindings"
	reasonMetricsMissing    = "FailedGetPodMetrics"
	actionScale             = "Scale"
)

// reconciler runs the FederatedHPAs.
type reconciler struct {
	client  client.Client
	members connector
	opts    shared.Options
	now     func() time.Time
	rec     shared.Recorder
	calc    autoscale.Calculator

	mu      sync.Mutex
	history map[client.ObjectKey]*history
}

// Reconcile reads the target's scale and its pods' metrics in the
// members, decides, scales the template and writes the status; then
// comes back after the sync period, as metrics move without events.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hpa autoscalingv1alpha1.FederatedHPA
	if err := r.client.Get(ctx, req.NamespacedName, &hpa); err != nil {
		if shared.IsNotFound(err) {
			r.forget(req.NamespacedName)
			metrics.ForgetFederatedHPA(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get federatedhpa %s: %w", req.NamespacedName, err)
	}
	if !hpa.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		metrics.ForgetFederatedHPA(req.Namespace, req.Name)
		return ctrl.Result{}, nil
	}
	now := r.now()
	status := *hpa.Status.DeepCopy()
	conds := r.pass(ctx, &hpa, &status, now)
	status.Conditions = mergeConditions(hpa.Status.Conditions, conds, now)
	status.ObservedGeneration = &hpa.Generation
	if !apiequality.Semantic.DeepEqual(status, hpa.Status) {
		hpa.Status = status
		if err := r.client.Status().Update(ctx, &hpa); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of federatedhpa %s: %w", req.NamespacedName, err)
		}
	}
	return ctrl.Result{RequeueAfter: r.opts.FederatedHPASyncPeriod}, nil
}

// pass is one decision; it fills status and returns the conditions.
func (r *reconciler) pass(ctx context.Context, hpa *autoscalingv1alpha1.FederatedHPA, status *autoscalingv2.HorizontalPodAutoscalerStatus, now time.Time) []autoscalingv2.HorizontalPodAutoscalerCondition {
	var d decision
	fail := func(reason, format string, args ...any) []autoscalingv2.HorizontalPodAutoscalerCondition {
		msg := fmt.Sprintf(format, args...)
		metrics.FederatedHPADecisions.WithLabelValues(hpa.Namespace, hpa.Name, metrics.DecisionFailed).Inc()
		r.rec.Object(hpa, corev1.EventTypeWarning, reason, actionScale, msg)
		d.set(autoscalingv2.AbleToScale, corev1.ConditionFalse, reason, msg)
		return d.Conditions
	}
	ns, ref := hpa.Namespace, hpa.Spec.ScaleTargetRef
	if r.opts.Reserved(ns) {
		return fail(reasonFailedGetScale, "namespace %s is reserved: its objects are not templates, and the control plane scales none of them", ns)
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return fail(reasonFailedGetScale, "scaleTargetRef.apiVersion %q: %v", ref.APIVersion, err)
	}
	gvk := gv.WithKind(ref.Kind)
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gvk)
	target.SetNamespace(ns)
	target.SetName(ref.Name)
	name := fmt.Sprintf("%s %s/%s", ref.Kind, ns, ref.Name)
	scale, raw, err := r.getScale(ctx, target)
	if err != nil {
		return fail(reasonFailedGetScale, "the HPA controller was unable to get the target's current scale: %s: %v", name, err)
	}
	current := scale.Spec.Replicas
	status.CurrentReplicas = current
	var rb workv1.ResourceBinding
	if err := shared.GetBinding(ctx, r.client, client.ObjectKey{Namespace: ns, Name: hoststore.BindingName(gvk.GroupKind(), ref.Name)}, &rb); err != nil {
		return fail(reasonFailedGetBinding, "the HPA controller was unable to get the binding of %s: %v", name, err)
	}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(target), target); err != nil {
		return fail(reasonFailedGetScale, "the HPA controller was unable to get the target reference object %s: %v", name, err)
	}
	res := api.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ns, Name: ref.Name, UID: target.GetUID()}
	specs := metricsOf(hpa.Spec.Metrics)
	read := func(ctx context.Context, cluster string) memberSample {
		return sampleMember(ctx, r.members, r.opts.Fleet, res, specs, cluster)
	}
	pull, err := r.pullMembers(ctx, rb.Spec.Clusters)
	if err != nil {
		return fail(reasonFailedGetBinding, "the HPA controller was unable to read the clusters of %s: %v", name, err)
	}
	samples := sampleMembers(ctx, skipPull(pull, read), rb.Spec.Clusters, r.opts.MemberRequestTimeout)
	observeReads(hpa, samples)
	fleet := merge(samples, podContainers(target), len(specs))
	for _, u := range fleet.Unanswered {
		r.rec.Object(hpa, corev1.EventTypeWarning, reasonMetricsMissing, actionScale, u)
	}
	p := propose(r.calc, hpa.Spec.Metrics, scaleCounts{Current: current, Status: scale.Status.Replicas}, fleet, now)
	h := r.historyOf(client.ObjectKeyFromObject(hpa))
	d = decide(hpa.Spec, current, p, fleet.Unanswered, h, now)
	h.trim(autoscale.DefaultBehavior(hpa.Spec.Behavior), now)
	status.CurrentMetrics = p.Statuses
	status.DesiredReplicas = d.Replicas
	metrics.FederatedHPACurrentReplicas.WithLabelValues(hpa.Namespace, hpa.Name).Set(float64(current))
	metrics.FederatedHPADesiredReplicas.WithLabelValues(hpa.Namespace, hpa.Name).Set(float64(d.Replicas))
	result := metrics.DecisionUnchanged
	defer func() { metrics.FederatedHPADecisions.WithLabelValues(hpa.Namespace, hpa.Name, result).Inc() }()
	if d.Replicas != current {
		if err := r.setScale(ctx, target, raw, d.Replicas); err != nil {
			result = metrics.DecisionFailed
			r.rec.Object(hpa, corev1.EventTypeWarning, reasonFailedRescale, actionScale, fmt.Sprintf("New size: %d; reason: %s; error: %v", d.Replicas, d.Reason, err))
			d.set(autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", fmt.Sprintf("the HPA controller was unable to update the target scale: %v", err))
			return d.Conditions
		}
		result = metrics.DecisionScaleDown
		if d.Replicas > current {
			result = metrics.DecisionScaleUp
			h.scaleUps = append(h.scaleUps, autoscale.ScaleEvent{Change: d.Replicas - current, At: now})
		} else {
			h.scaleDowns = append(h.scaleDowns, autoscale.ScaleEvent{Change: current - d.Replicas, At: now})
		}
		status.LastScaleTime = &metav1.Time{Time: now}
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", d.Replicas))
		r.rec.Object(hpa, corev1.EventTypeNormal, reasonSuccessfulRescale, actionScale, fmt.Sprintf("New size: %d; reason: %s", d.Replicas, d.Reason))
	}
	return d.Conditions
}

// pullMembers is the pull-mode members among clusters; a cluster no
// longer registered is not one (its read fails and names it).
func (r *reconciler) pullMembers(ctx context.Context, clusters []api.TargetCluster) (map[string]bool, error) {
	out := map[string]bool{}
	for _, tc := range clusters {
		var cl clusterv1.Cluster
		err := r.client.Get(ctx, client.ObjectKey{Name: tc.Name}, &cl)
		if shared.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster %s: %w", tc.Name, err)
		}
		if shared.IsPull(&cl) {
			out[tc.Name] = true
		}
	}
	return out, nil
}

// getScale reads the template's scale subresource.
func (r *reconciler) getScale(ctx context.Context, target *unstructured.Unstructured) (*autoscalingv1.Scale, *unstructured.Unstructured, error) {
	raw := &unstructured.Unstructured{}
	if err := r.client.SubResource("scale").Get(ctx, target, raw); err != nil {
		if shared.IsNotFound(err) {
			return nil, nil, fmt.Errorf("not found, or its kind has no scale subresource: %w", err)
		}
		return nil, nil, err
	}
	var sc autoscalingv1.Scale
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, &sc); err != nil {
		return nil, nil, fmt.Errorf("decode scale: %w", err)
	}
	return &sc, raw, nil
}

// setScale writes replicas through the scale subresource, with the
// resourceVersion read: a concurrent change makes it fail, and the next
// pass decides again.
func (r *reconciler) setScale(ctx context.Context, target, raw *unstructured.Unstructured, replicas int32) error {
	if err := unstructured.SetNestedField(raw.Object, int64(replicas), "spec", "replicas"); err != nil {
		return err
	}
	return r.client.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(raw))
}

// podContainers is the template's pod template's containers, which stand
// for the pods of a member that does not answer (their requests).
func podContainers(target *unstructured.Unstructured) []corev1.Container {
	raw, found, err := unstructured.NestedSlice(target.Object, "spec", "template", "spec", "containers")
	if err != nil || !found {
		return nil
	}
	var spec struct {
		Containers []corev1.Container `json:"containers"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"containers": raw}, &spec); err != nil {
		return nil
	}
	return spec.Containers
}

func (r *reconciler) historyOf(key client.ObjectKey) *history {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.history[key]
	if h == nil {
		h = &history{}
		r.history[key] = h
	}
	return h
}

func (r *reconciler) forget(key client.ObjectKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.history, key)
}

// observeReads records each member read's time and whether it left the
// member's pods or a metric missing.
func observeReads(hpa *autoscalingv1alpha1.FederatedHPA, samples []memberSample) {
	for _, s := range samples {
		if errors.Is(s.Err, errPullMember) {
			// Never contacted: neither a read nor an error to count.
			continue
		}
		result := metrics.ResultSuccess
		failed := s.Err != nil
		for _, m := range s.Metrics {
			failed = failed || m.Err != nil
		}
		if failed {
			result = metrics.ResultError
			metrics.FederatedHPAMemberReadErrors.WithLabelValues(hpa.Namespace, hpa.Name, s.Cluster).Inc()
		}
		metrics.FederatedHPAMemberReadDuration.WithLabelValues(s.Cluster, result).Observe(s.Took.Seconds())
	}
}
