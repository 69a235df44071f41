package descheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// Kinds whose pods the descheduler can tell apart: a Deployment's through
// its ReplicaSets, a StatefulSet's directly. Karmada's descheduler knows
// Deployments only. Other kinds (custom resources among them) may count
// replicas otherwise than in pods, so they are left alone.
var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

// descheduler is a leader-only runnable: one pass over the bindings every
// interval.
type descheduler struct {
	client  client.Client
	members *shared.Members
	opts    shared.Options
	now     func() time.Time
	events  shared.Recorder
	log     logr.Logger
}

// NeedLeaderElection keeps the descheduler to the leader, as the
// scheduler whose results it lowers.
func (d *descheduler) NeedLeaderElection() bool { return true }

// Start runs a pass every interval until ctx ends.
func (d *descheduler) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, d.once, d.opts.DeschedulingInterval)
	return nil
}

// once looks at every ResourceBinding once. A binding that fails is
// reported and tried again on the next pass.
func (d *descheduler) once(ctx context.Context) {
	var list workv1.ResourceBindingList
	if err := d.client.List(ctx, &list); err != nil {
		d.log.Error(err, "list resource bindings")
		return
	}
	for i := range list.Items {
		rb := &list.Items[i]
		if !d.eligible(rb) {
			continue
		}
		if err := d.deschedule(ctx, rb); err != nil {
			d.log.Error(err, "deschedule", "binding", client.ObjectKeyFromObject(rb))
		}
	}
}

// eligible reports whether the descheduler may lower rb's clusters: a
// detector's binding the controllers accept, of a Deployment or a
// StatefulSet, whose placement divides by what fits, and whose current
// spec the scheduler has scheduled (no schedule pending or failed).
func (d *descheduler) eligible(rb *workv1.ResourceBinding) bool {
	if !rb.DeletionTimestamp.IsZero() || rb.Spec.Placement == nil || shared.Attached(rb) || len(rb.Spec.Clusters) == 0 {
		return false
	}
	if !scheduler.DividesByAvailability(rb.Spec.Placement) {
		return false
	}
	if gk := schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind).GroupKind(); gk != deploymentKind && gk != statefulSetKind {
		return false
	}
	if rb.Status.SchedulerObservedGeneration != rb.Generation || !apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionScheduled) {
		return false
	}
	return len(shared.ValidateResourceBinding(rb, d.opts)) == 0
}

// deschedule counts rb's unschedulable replicas in each of its clusters
// and writes the lowered clusters, with an optimistic lock: a schedule
// written since wins, and the next pass looks again.
func (d *descheduler) deschedule(ctx context.Context, rb *workv1.ResourceBinding) error {
	now := d.now()
	seen := map[string]estimator.WorkloadReplicas{}
	for _, tc := range rb.Spec.Clusters {
		if tc.Replicas <= 0 {
			continue
		}
		r, err := d.count(ctx, rb, tc.Name, now)
		if err != nil {
			// One member that does not answer must not keep the
			// others' replicas stuck.
			d.log.Error(err, "count unschedulable replicas", "binding", client.ObjectKeyFromObject(rb), "cluster", tc.Name)
			continue
		}
		seen[tc.Name] = r
	}
	next, moves := plan(rb.Spec.Clusters, seen)
	if len(moves) == 0 {
		return nil
	}
	orig := rb.DeepCopy()
	rb.Spec.Clusters = next
	if err := shared.PatchBinding(ctx, d.client, rb, orig, true); err != nil {
		if apierrors.IsConflict(err) {
			// The scheduler (or another writer) was first: the next
			// pass looks at what it wrote.
			d.log.V(1).Info("binding changed while descheduling; next pass", "binding", client.ObjectKeyFromObject(orig))
			return nil
		}
		err = fmt.Errorf("lower the clusters of binding %s/%s: %w", orig.Namespace, orig.Name, err)
		d.events.Binding(orig, corev1.EventTypeWarning, shared.EventReasonDescheduleBindingFailed, shared.ActionDeschedule, err.Error())
		return err
	}
	for _, m := range moves {
		metrics.DescheduledReplicas.WithLabelValues(m.cluster).Add(float64(m.from - m.to))
	}
	d.events.Binding(rb, corev1.EventTypeNormal, shared.EventReasonDescheduleBindingSucceed, shared.ActionDeschedule, note(moves, d.opts.UnschedulableThreshold))
	return nil
}

// count is the template's pods in the member called cluster: those that
// hold a node and those unschedulable past the threshold. A member the
// control plane does not watch (a Pull cluster, or one not yet synced), a
// namespace with no unschedulable pod, and a member object flotilla does
// not own count nothing.
func (d *descheduler) count(ctx context.Context, rb *workv1.ResourceBinding, cluster string, now time.Time) (estimator.WorkloadReplicas, error) {
	c, ok := d.members.Cache.Peek(cluster)
	if !ok {
		return estimator.WorkloadReplicas{}, nil
	}
	pods := c.Pods()
	res := rb.Spec.Resource
	if pods == nil || !pods.Stuck(res.Namespace) {
		return estimator.WorkloadReplicas{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.WorkRequestTimeout)
	defer cancel()
	live, err := workload(ctx, c, res)
	if err != nil || live == nil {
		return estimator.WorkloadReplicas{}, err
	}
	if !execution.Owns(live, d.opts.Fleet, api.TemplateRefOfResource(res)) {
		return estimator.WorkloadReplicas{}, nil
	}
	var sets []estimator.Controlled
	if gk := live.GroupVersionKind().GroupKind(); gk == deploymentKind {
		if sets, err = replicaSets(ctx, c, live); err != nil {
			return estimator.WorkloadReplicas{}, err
		}
	}
	return pods.Replicas(res.Namespace, live.GetUID(), sets, d.opts.UnschedulableThreshold, now), nil
}

// workload reads the template's object in the member; nil when it is not
// there.
func workload(ctx context.Context, c *member.Client, res api.ObjectReference) (*unstructured.Unstructured, error) {
	gvk := schema.FromAPIVersionAndKind(res.APIVersion, res.Kind)
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("map %s in cluster %s: %w", gvk, c.Name, err)
	}
	live, err := c.Dynamic.Resource(m.Resource).Namespace(res.Namespace).Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s/%s in cluster %s: %w", res.Kind, res.Namespace, res.Name, c.Name, err)
	}
	return live, nil
}

// replicaSets lists the ReplicaSets the Deployment's selector matches in
// the member, with their controllers. The selector only narrows the list:
// Pods.Replicas keeps those whose controller is the Deployment by UID.
func replicaSets(ctx context.Context, c *member.Client, deployment *unstructured.Unstructured) ([]estimator.Controlled, error) {
	var spec struct {
		Selector *metav1.LabelSelector `json:"selector"`
	}
	if raw, ok := deployment.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
			return nil, fmt.Errorf("selector of Deployment %s/%s in cluster %s: %w", deployment.GetNamespace(), deployment.GetName(), c.Name, err)
		}
	}
	opts := metav1.ListOptions{}
	if spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("selector of Deployment %s/%s in cluster %s: %w", deployment.GetNamespace(), deployment.GetName(), c.Name, err)
		}
		opts.LabelSelector = sel.String()
	}
	list, err := c.Kubernetes.AppsV1().ReplicaSets(deployment.GetNamespace()).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list ReplicaSets of Deployment %s/%s in cluster %s: %w", deployment.GetNamespace(), deployment.GetName(), c.Name, err)
	}
	out := make([]estimator.Controlled, 0, len(list.Items))
	for i := range list.Items {
		rs := &list.Items[i]
		e := estimator.Controlled{UID: rs.UID}
		if ref := metav1.GetControllerOf(rs); ref != nil {
			e.Controller = ref.UID
		}
		out = append(out, e)
	}
	return out, nil
}
