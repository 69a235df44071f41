package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// scaleTarget is the binding key of the workload an HPA template scales
// (spec.scaleTargetRef, in the HPA's namespace), and whether it names one.
func scaleTarget(hpa client.Object) (client.ObjectKey, bool) {
	u, ok := hpa.(*unstructured.Unstructured)
	if !ok {
		return client.ObjectKey{}, false
	}
	ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "scaleTargetRef")
	gv, err := schema.ParseGroupVersion(ref["apiVersion"])
	if err != nil || ref["kind"] == "" || ref["name"] == "" {
		return client.ObjectKey{}, false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref["kind"]}
	return client.ObjectKey{Namespace: u.GetNamespace(), Name: BindingName(gk, ref["name"])}, true
}

// markScaleTarget is Karmada's HPA scale-target marker, at render time: a
// workload that a propagated HorizontalPodAutoscaler of its namespace scales
// is rendered with the retain-replicas label, so its members keep the
// replicas their HPAs set (interpret.Retain). Karmada writes the label on
// the template in the control plane; flotilla never writes a user's
// template, so the label goes on the rendered copy only and is gone from
// the next rendering once no propagated HPA targets the workload. An HPA
// counts as propagated when a policy claimed it (its binding carries
// LabelPolicy). The HPA lives in the workload's namespace, which a tenant
// who can write the HPA can write too, so the mark gives no one a power
// they lacked: they could set the label themselves.
//
// A custom kind is marked when a customization scripts its retention (an
// Argo Rollout scaled by an HPA); its script decides what the label means.
//
// It reads the namespace's bindings, not its HPAs, so a control plane that
// propagates no HPA makes no HPA reads.
func markScaleTarget(ctx context.Context, c client.Reader, in *interpret.Interpreter, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	scalable := interpret.Of(tmpl).ReplicaField == "replicas" || in.RetentionCustomized(tmpl)
	if !scalable || tmpl.GetLabels()[interpret.RetainReplicasLabel] == interpret.RetainReplicasValue {
		return tmpl, nil
	}
	var list workv1.ResourceBindingList
	if err := c.List(ctx, &list, client.InNamespace(rb.Namespace)); err != nil {
		return nil, fmt.Errorf("list the bindings of namespace %s: %w", rb.Namespace, err)
	}
	self := client.ObjectKeyFromObject(rb)
	for i := range list.Items {
		hrb := &list.Items[i]
		if groupKindOf(hrb.Spec.Resource) != interpret.HorizontalPodAutoscalerKind ||
			hrb.Labels[LabelPolicy] == "" || !hrb.DeletionTimestamp.IsZero() {
			continue
		}
		hpa, err := readTemplate(ctx, c, hrb)
		if err != nil {
			return nil, err
		}
		if hpa == nil || !hpa.GetDeletionTimestamp().IsZero() {
			continue
		}
		if key, ok := scaleTarget(hpa); !ok || key != self {
			continue
		}
		out := tmpl.DeepCopy()
		labels := out.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[interpret.RetainReplicasLabel] = interpret.RetainReplicasValue
		out.SetLabels(labels)
		return out, nil
	}
	return tmpl, nil
}

// hpaTargets maps an HPA template, or the binding of one, to the binding of
// the workload it scales, so that workload is rendered again when the HPA
// comes, goes, is claimed or changes its target (an update maps the old and
// the new object).
func hpaTargets(c client.Reader) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if rb, ok := obj.(*workv1.ResourceBinding); ok {
			if groupKindOf(rb.Spec.Resource) != interpret.HorizontalPodAutoscalerKind {
				return nil
			}
			hpa, err := readTemplate(ctx, c, rb)
			if err != nil || hpa == nil {
				return nil
			}
			obj = hpa
		}
		if key, ok := scaleTarget(obj); ok {
			return []reconcile.Request{{NamespacedName: key}}
		}
		return nil
	}
}
