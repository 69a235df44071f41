package work

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// AnnotationVerifiedGeneration is set by the control plane on a Work of a
// Pull cluster once it has checked the Work against its binding (the same
// verifyWork a pushed Work passes): it holds the metadata.generation that
// was checked. The cluster's agent, which may read nothing but its own
// execution namespace, applies a Work only when it names the Work's current
// generation, and takes the conflict resolution from
// AnnotationConflictResolution, which the control plane writes in the same
// patch. A Work someone else wrote in the execution namespace is therefore
// never applied by the agent either.
const AnnotationVerifiedGeneration = "work.flotilla.io/verified-generation"

// handsOff reports whether the control plane leaves a Work's member to the
// cluster's agent: the Work's Cluster is Pull and this is not the agent.
func (e *workExecution) handsOff(cl *clusterv1.Cluster) bool { return !e.agent && shared.IsPull(cl) }

// notReady is clusterNotReady, except in the agent: it runs beside its
// member, and the Ready condition it would read is its own report (or the
// control plane's Unknown from while the agent was away).
func (e *workExecution) notReady(cl *clusterv1.Cluster) string {
	if e.agent {
		return ""
	}
	return clusterNotReady(cl)
}

// verify is verifyWork in the control plane; in the agent, which may not
// read bindings, templates or policies, it is the control plane's verdict
// recorded and signed on the Work (verifiedByHub).
func (e *workExecution) verify(ctx context.Context, w *workv1.Work, cl *clusterv1.Cluster) (*shared.Trusted, error) {
	if e.agent {
		return verifiedByHub(w, cl)
	}
	return shared.VerifyWork(ctx, e.client, w, cl.Name, e.opts)
}

// owned is ownedWork in the control plane; in the agent, a Work being
// deleted is one whose objects may be removed when the control plane once
// verified this very Work (its owner signature checks out).
func (e *workExecution) owned(ctx context.Context, w *workv1.Work, cl *clusterv1.Cluster) (bool, error) {
	if e.agent {
		pub, err := clusterKey(cl)
		if err != nil {
			return false, nil //nolint:nilerr // no key, no proof of ownership: the objects stay
		}
		return verifySignature(pub, w, AnnotationOwnerSignature, ownerPayload(w)) == nil, nil
	}
	return shared.OwnedWork(ctx, e.client, w, e.opts)
}

// verifiedByHub is the agent's verifyWork: the Work's current generation
// must carry the control plane's verification, signed with the key
// published on the agent's Cluster, else it waits (errPending). An
// annotation written by anyone else, or a signature copied from another
// Work or generation, never passes.
func verifiedByHub(w *workv1.Work, cl *clusterv1.Cluster) (*shared.Trusted, error) {
	gen := strconv.FormatInt(w.Generation, 10)
	if w.Annotations[AnnotationVerifiedGeneration] != gen {
		return nil, shared.ErrPending
	}
	pub, err := clusterKey(cl)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", shared.ErrPending, err)
	}
	raw := w.Annotations[shared.AnnotationConflictResolution]
	payload, err := workPayload(w, w.Generation, raw)
	if err != nil {
		return nil, err
	}
	if err := verifySignature(pub, w, AnnotationWorkSignature, payload); err != nil {
		return nil, fmt.Errorf("%w: %w", shared.ErrPending, err)
	}
	cr := api.ConflictResolution(raw)
	if cr != api.ConflictOverwrite {
		cr = api.ConflictAbort
	}
	return &shared.Trusted{Conflict: cr, Preserve: w.Spec.PreserveResourcesOnDeletion}, nil
}

// stamp records the control plane's verdict on a Work of a Pull cluster
// instead of applying it: a trusted Work gets AnnotationVerifiedGeneration
// and its effective conflict resolution; a refused one loses the
// verification and gets the Applied=False Refused condition a pushed Work
// gets, so the agent leaves it alone. The verdict is checked again every
// resync, since the binding or its policy may change without the Work.
func (e *workExecution) stamp(ctx context.Context, w *workv1.Work, cl *clusterv1.Cluster, t *shared.Trusted, refused error) (reconcile.Result, error) {
	want := map[string]string{AnnotationVerifiedGeneration: "", AnnotationWorkSignature: "", AnnotationOwnerSignature: ""}
	if refused == nil {
		cr := t.Conflict
		if cr == "" {
			cr = api.ConflictAbort
		}
		signed, public, err := e.signer.sign(ctx, w, string(cr))
		if err != nil {
			return reconcile.Result{}, err
		}
		// The key first: the agent checks the signature against it.
		if err := e.signer.publishKey(ctx, cl, public); err != nil {
			return reconcile.Result{}, err
		}
		want = signed
	}
	orig := w.DeepCopy()
	changed := false
	for k, v := range want {
		switch {
		case v == "" && w.Annotations[k] != "":
			delete(w.Annotations, k)
			changed = true
		case v != "" && w.Annotations[k] != v:
			if w.Annotations == nil {
				w.Annotations = map[string]string{}
			}
			w.Annotations[k], changed = v, true
		}
	}
	if changed {
		if err := e.client.Patch(ctx, w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, fmt.Errorf("record the verification of work %s/%s: %w", w.Namespace, w.Name, err)
		}
	}
	if refused != nil {
		orig := w.DeepCopy()
		apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: api.ConditionWorkApplied, Status: metav1.ConditionFalse, Reason: api.ReasonRefused, Message: refused.Error(),
			ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(e.now()),
		})
		if err := patchWorkStatus(ctx, e.client, orig, w); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: e.opts.Resync}, nil
}

// unsigned records on a Work of the agent's cluster that claims the
// control plane's verification of its generation but whose signature does
// not check out why the agent does not apply it (Applied=False,
// SignatureMissing or SignatureInvalid, naming the Work and the cluster), so
// the refusal is visible on the host rather than only in the agent's
// member: the agent may write its Works' status and nothing more. The
// control plane, which refuses such a Work itself when it is not one of
// its own, takes the verification back, after which the agent leaves the
// Work alone (errPending).
func (e *workExecution) unsigned(ctx context.Context, w *workv1.Work, cl *clusterv1.Cluster) (reconcile.Result, error) {
	reason, why := api.ReasonSignatureInvalid, fmt.Sprintf("annotation %s does not verify against the key the control plane published on cluster %s (annotation %s)", AnnotationWorkSignature, cl.Name, AnnotationSigningKey)
	if w.Annotations[AnnotationWorkSignature] == "" {
		reason, why = api.ReasonSignatureMissing, fmt.Sprintf("annotation %s claims the control plane verified generation %d, but annotation %s is missing", AnnotationVerifiedGeneration, w.Generation, AnnotationWorkSignature)
	} else if _, err := clusterKey(cl); err != nil {
		why = fmt.Sprintf("annotation %s cannot be checked: %v", AnnotationWorkSignature, err)
	}
	orig := w.DeepCopy()
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: api.ConditionWorkApplied, Status: metav1.ConditionFalse, Reason: reason,
		Message:            fmt.Sprintf("work %s/%s is not applied to cluster %s: %s; only a Work the control plane checked and signed is applied", w.Namespace, w.Name, cl.Name, why),
		ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(e.now()),
	})
	if err := patchWorkStatus(ctx, e.client, orig, w); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: agentRetry}, nil
}

// agentTrigger is executionTrigger for the agent, which also acts when the
// control plane's verification of a Work changes.
func agentTrigger(oldW, newW *workv1.Work) bool {
	return executionTrigger(oldW, newW) || oldW.Annotations[AnnotationVerifiedGeneration] != newW.Annotations[AnnotationVerifiedGeneration] ||
		oldW.Annotations[AnnotationWorkSignature] != newW.Annotations[AnnotationWorkSignature]
}

// agentRetry is how soon the agent looks again at a Work whose Cluster it
// cannot read yet (it registers it first).
const agentRetry = 2 * time.Second
