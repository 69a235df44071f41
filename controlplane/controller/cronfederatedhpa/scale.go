package cronfederatedhpa

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1alpha1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// scale applies a rule to the CronFederatedHPA's target, which is always
// in the CronFederatedHPA's own namespace (a scaleTargetRef has none).
// It writes only replicas: the template's through its scale subresource,
// or a FederatedHPA's minReplicas/maxReplicas with a merge patch of those
// fields alone.
func (r *reconciler) scale(ctx context.Context, cron *autoscalingv1alpha1.CronFederatedHPA, rule api.CronFederatedHPARule) error {
	ns, ref := cron.Namespace, cron.Spec.ScaleTargetRef
	if r.opts.Reserved(ns) {
		return fmt.Errorf("namespace %s is reserved: its objects are not templates, and the control plane scales none of them", ns)
	}
	if api.ScalesFederatedHPA(ref) {
		return r.scaleFederatedHPA(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, rule)
	}
	if rule.TargetReplicas == nil {
		return fmt.Errorf("targetReplicas is not set: a %s takes targetReplicas", ref.Kind)
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return fmt.Errorf("scaleTargetRef.apiVersion %q: %w", ref.APIVersion, err)
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gv.WithKind(ref.Kind))
	target.SetNamespace(ns)
	target.SetName(ref.Name)
	name := fmt.Sprintf("%s %s/%s", ref.Kind, ns, ref.Name)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		raw := &unstructured.Unstructured{}
		if err := r.client.SubResource("scale").Get(ctx, target, raw); err != nil {
			if shared.IsNotFound(err) {
				return fmt.Errorf("%s: not found, or its kind has no scale subresource", name)
			}
			return fmt.Errorf("read the scale of %s: %w", name, err)
		}
		var sc autoscalingv1.Scale
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, &sc); err != nil {
			return fmt.Errorf("read the scale of %s: %w", name, err)
		}
		if sc.Spec.Replicas == *rule.TargetReplicas {
			return nil
		}
		sc.Spec.Replicas = *rule.TargetReplicas
		body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&sc)
		if err != nil {
			return fmt.Errorf("scale %s: %w", name, err)
		}
		raw.Object = body
		if err := r.client.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(raw)); err != nil {
			return fmt.Errorf("scale %s to %d: %w", name, *rule.TargetReplicas, err)
		}
		return nil
	})
}

// scaleFederatedHPA sets the bounds a rule names. A FederatedHPA of
// Karmada's group is flotilla's of the same name. Bounds that would cross
// (a new minReplicas above the maxReplicas kept) fail with both numbers.
func (r *reconciler) scaleFederatedHPA(ctx context.Context, key client.ObjectKey, rule api.CronFederatedHPARule) error {
	var h autoscalingv1alpha1.FederatedHPA
	if err := r.client.Get(ctx, key, &h); err != nil {
		if shared.IsNotFound(err) {
			return fmt.Errorf("FederatedHPA %s: not found", key)
		}
		return fmt.Errorf("read FederatedHPA %s: %w", key, err)
	}
	minR, maxR := int32(1), h.Spec.MaxReplicas
	if h.Spec.MinReplicas != nil {
		minR = *h.Spec.MinReplicas
	}
	spec := map[string]int32{}
	if v := rule.TargetMinReplicas; v != nil && *v != minR {
		minR, spec["minReplicas"] = *v, *v
	}
	if v := rule.TargetMaxReplicas; v != nil && *v != maxR {
		maxR, spec["maxReplicas"] = *v, *v
	}
	if minR > maxR {
		return fmt.Errorf("FederatedHPA %s: minReplicas %d would exceed maxReplicas %d", key, minR, maxR)
	}
	if len(spec) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return fmt.Errorf("scale FederatedHPA %s: %w", key, err)
	}
	if err := r.client.Patch(ctx, &h, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("scale FederatedHPA %s: %w", key, err)
	}
	return nil
}
