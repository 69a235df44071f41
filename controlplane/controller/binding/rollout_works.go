package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/override"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// maxStableManifests bounds the stable copy: a Work's annotations share
// 256 KiB. A larger rendering gets no copy, and a rollback leaves that
// cluster as it is.
const maxStableManifests = 128 << 10

// actionRollout is the action of the rollout's events.
const actionRollout = "Rollout"

// rolloutOutcome is what a staged rollout decided in one pass.
type rolloutOutcome struct {
	status *api.BindingRolloutStatus
	events []rolloutEvent
	gates  []string
	wait   time.Duration
}

// stageWorks stages the binding's Works when its policy has a rollout: it
// decides which clusters get the rendering now and changes desired to
// match (a held cluster keeps its Work or gets none, a rolled-back one its
// stable copy). It returns nil when the policy has no rollout.
func (b *bindingReconciler) stageWorks(ctx context.Context, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *shared.Trusted,
	rendered map[string]render.Work, desired map[string]*workv1.Work, existing []workv1.Work,
) (*rolloutOutcome, error) {
	if t.Rollout == nil {
		return nil, nil
	}
	ref := api.TemplateRefOf(tmpl)
	applied := make([]override.Applied, 0, len(rendered))
	for _, r := range rendered {
		applied = append(applied, r.Applied)
	}
	target := rolloutRevision(tmpl.GetGeneration(), applied)
	stages, err := b.rolloutStages(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("stage the rollout of %s: %w", ref, err)
	}
	if err := b.liveRollout(ctx, rb); err != nil {
		return nil, err
	}
	works := workByCluster(existing, shared.WorkName(ref))
	facts := make(map[string]rolloutCluster, len(t.Clusters))
	for _, tc := range t.Clusters {
		facts[tc.Name] = clusterFacts(tc.Name, works[tc.Name], desired[tc.Name], ref)
	}
	d := decideRollout(rolloutInput{
		target: target, stages: stages, rollback: t.Rollout.FailureAction() == api.RolloutRollback,
		prev: rb.Status.Rollout, resume: tmpl.GetAnnotations()[shared.AnnotationRolloutResume], clusters: facts, now: b.now(),
	})
	for _, tc := range t.Clusters {
		if err := stageWork(d.actions[tc.Name], tc.Name, works[tc.Name], desired, target); err != nil {
			return nil, err
		}
	}
	if err := recordDigests(&d.status, rb.Status.Rollout, d.actions, works, desired); err != nil {
		return nil, err
	}
	return &rolloutOutcome{status: &d.status, events: d.events, gates: d.gates, wait: d.wait}, nil
}

// liveRollout replaces rb's status.rollout with the host's: the cache may
// not have the last pass's write yet, and a rollout judged from an older
// state could update a cluster it has just rolled back. The status patch
// is then computed against the host's state too.
func (b *bindingReconciler) liveRollout(ctx context.Context, rb *workv1.ResourceBinding) error {
	if b.reader == nil {
		return nil
	}
	var live workv1.ResourceBinding
	if err := shared.GetBinding(ctx, b.reader, client.ObjectKeyFromObject(rb), &live); err != nil {
		return fmt.Errorf("read the rollout status of %s: %w", hoststore.BindingRef(rb), err)
	}
	if live.UID == rb.UID {
		rb.Status.Rollout = live.Status.Rollout
	}
	return nil
}

// workByCluster picks each cluster's Work of the template (name) that is
// not being deleted.
func workByCluster(existing []workv1.Work, name string) map[string]*workv1.Work {
	out := map[string]*workv1.Work{}
	for i := range existing {
		w := &existing[i]
		if cluster, ok := shared.ClusterOfNamespace(w.Namespace); ok && w.Name == name && w.DeletionTimestamp.IsZero() {
			out[cluster] = w
		}
	}
	return out
}

// clusterFacts is what the rollout decision needs from a cluster's Work
// (nil when it has none) and the Work the binding wants there.
func clusterFacts(cluster string, have, want *workv1.Work, ref api.TemplateRef) rolloutCluster {
	f := rolloutCluster{health: api.ResourceUnknown}
	if have == nil {
		f.reason = "no work yet"
		return f
	}
	// The gate also needs the member's rollout complete, judged from the
	// Work's manifest status: the member object's generation and its
	// reflected status (replicas, updated, available, observedGeneration).
	// The spec is not reported; the health the member computed from the
	// live object covers spec.replicas.
	cs := workClusterStatus(cluster, have, ref)
	cs = health.Gated(cs, health.Reported(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}, cs))
	f.hasWork, f.revision = true, workRevision(have)
	f.current = want != nil && shared.SameWorkSpec(have.Spec, want.Spec)
	f.health = api.ResourceHealth(cs.Health)
	f.healthy = cs.Applied && cs.Health == health.Healthy && cs.ResourceTemplateGeneration != 0
	f.reason = cs.Reason()
	if !f.healthy && f.reason == "" {
		f.reason = "waiting for the member to report on the applied rendering"
		if cs.Health != "" && cs.Health != health.Unknown {
			f.reason = string(cs.Health)
		}
	}
	f.stableRevision, f.restorable = have.Annotations[shared.AnnotationStableRevision]
	return f
}

// workRevision is the revision of a Work's rendering: its rollout
// annotation, or the template generation of a Work written before the
// policy had a rollout.
func workRevision(w *workv1.Work) string {
	if r, ok := w.Annotations[shared.AnnotationRolloutRevision]; ok {
		return r
	}
	return w.Annotations[shared.AnnotationTemplateGeneration]
}

// stageWork carries out a rollout action on the Work desired holds for
// cluster; have is the cluster's Work now, nil when it has none.
func stageWork(a rolloutAction, cluster string, have *workv1.Work, desired map[string]*workv1.Work, target string) error {
	want := desired[cluster]
	if want == nil {
		return nil
	}
	switch a {
	case rolloutHold:
		if have == nil {
			delete(desired, cluster)
			return nil
		}
		kept := have.DeepCopy()
		// Suspension still reaches a held Work.
		kept.Spec.SuspendDispatching = want.Spec.SuspendDispatching
		desired[cluster] = kept
	case rolloutPromote:
		markRevision(want, have, target)
	case rolloutUpdate:
		markRevision(want, have, target)
		return keepStable(want, have)
	case rolloutRollback:
		return rollBack(cluster, have, desired)
	}
	return nil
}

// markRevision labels want with the target revision when it changes the
// cluster's rendering; an unchanged Work keeps its revision, so the gate
// skips it.
func markRevision(want, have *workv1.Work, target string) {
	if have == nil || !shared.SameWorkSpec(have.Spec, want.Spec) {
		want.Annotations[shared.AnnotationRolloutRevision] = target
	}
}

// keepStable carries the stable copy over to want: the one have already
// keeps while its own rendering is on trial, else have's rendering, which
// passed its gate (or predates the rollout). A cluster without a Work
// records that it had no rendering.
func keepStable(want, have *workv1.Work) error {
	if have == nil {
		want.Annotations[shared.AnnotationStableRevision] = ""
		return nil
	}
	if rev, ok := have.Annotations[shared.AnnotationStableRevision]; ok {
		want.Annotations[shared.AnnotationStableRevision] = rev
		if m, ok := have.Annotations[shared.AnnotationStableManifests]; ok {
			want.Annotations[shared.AnnotationStableManifests] = m
		}
		return nil
	}
	if shared.SameWorkSpec(have.Spec, want.Spec) {
		return nil
	}
	raw, err := json.Marshal(have.Spec.Workload.Manifests)
	if err != nil {
		return fmt.Errorf("keep the stable copy of work %s/%s: %w", have.Namespace, have.Name, err)
	}
	if len(raw) > maxStableManifests {
		return nil
	}
	want.Annotations[shared.AnnotationStableRevision] = workRevision(have)
	want.Annotations[shared.AnnotationStableManifests] = string(raw)
	return nil
}

// rollBack gives a cluster's Work its stable copy back, or removes the
// Work of a cluster that had no rendering before the rollout.
func rollBack(cluster string, have *workv1.Work, desired map[string]*workv1.Work) error {
	want := desired[cluster]
	rev, ok := have.Annotations[shared.AnnotationStableRevision]
	if !ok {
		return nil
	}
	raw, ok := have.Annotations[shared.AnnotationStableManifests]
	if !ok {
		delete(desired, cluster)
		return nil
	}
	var manifests []api.Manifest
	if err := json.Unmarshal([]byte(raw), &manifests); err != nil {
		return fmt.Errorf("roll work %s/%s back: annotation %s: %w", have.Namespace, have.Name, shared.AnnotationStableManifests, err)
	}
	back := have.DeepCopy()
	back.Spec.Workload.Manifests = manifests
	back.Spec.SuspendDispatching = want.Spec.SuspendDispatching
	if back.Annotations == nil {
		back.Annotations = map[string]string{}
	}
	back.Annotations[shared.AnnotationRolloutRevision] = rev
	// The template generation goes back too, so the template's status
	// does not count the cluster as running the current generation.
	if gen, _, _ := strings.Cut(rev, "-"); gen != "" {
		if _, err := strconv.ParseInt(gen, 10, 64); err == nil {
			back.Annotations[shared.AnnotationTemplateGeneration] = gen
		}
	}
	for _, k := range shared.BindingOwnedAnnotations {
		delete(back.Annotations, k)
	}
	desired[cluster] = back
	return nil
}

// rolloutStages assigns the scheduled clusters to the policy's stages
// (policy.AssignStages, shared with the Terraform provider), each gate
// with its defaults.
func (b *bindingReconciler) rolloutStages(ctx context.Context, t *shared.Trusted) ([]rolloutStage, error) {
	var list clusterv1.ClusterList
	if err := b.client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	byName := make(map[string]*api.Cluster, len(list.Items))
	for i := range list.Items {
		c := list.Items[i].Engine()
		byName[c.Name] = &c
	}
	names := make([]string, len(t.Clusters))
	for i, tc := range t.Clusters {
		names[i] = tc.Name
	}
	assigned, err := policy.AssignStages(t.Rollout, names, byName)
	if err != nil {
		return nil, err
	}
	out := make([]rolloutStage, len(assigned))
	for i, s := range assigned {
		out[i] = rolloutStage{name: s.Name, batches: s.Batches,
			gate: gateRule{bake: s.Gate.Bake(), timeout: s.Gate.Timeout(), maxUnhealthy: s.Gate.MaxUnhealthy()}}
	}
	return out, nil
}

// rolloutRecorded records the rollout's events on the binding and its
// template, and its gate results in flotilla_rollout_gates_total.
func (b *bindingReconciler) rolloutRecorded(rb *workv1.ResourceBinding, o *rolloutOutcome) {
	if o == nil {
		return
	}
	for _, e := range o.events {
		kind := corev1.EventTypeNormal
		if e.warning {
			kind = corev1.EventTypeWarning
		}
		b.events.Binding(rb, kind, e.reason, actionRollout, e.note)
	}
	for _, g := range o.gates {
		metrics.RolloutGates.WithLabelValues(g).Inc()
	}
}

// rolloutCondition turns the FullyApplied condition False while the
// rollout is not complete (unless a Work failed): the change has not
// reached every cluster yet, whatever the Works of the later stages say.
func rolloutCondition(cond *metav1.Condition, o *rolloutOutcome) {
	if o == nil || o.status.Phase == api.BindingRolloutComplete || cond.Reason == "FullyAppliedFailed" {
		return
	}
	s := o.status
	cond.Status, cond.Reason = metav1.ConditionFalse, "Rollout"+string(s.Phase)
	cond.Message = fmt.Sprintf("staged rollout of revision %s: %s", s.Revision, s.Message)
}
