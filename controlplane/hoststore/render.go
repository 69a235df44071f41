package hoststore

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// RenderBinding renders tmpl for each cluster the binding is scheduled to,
// with the override policies that match it, as the binding controller
// writes it into Works; fleet is the control plane's fleet name. A workload
// that a propagated HPA scales is rendered with the retain-replicas label
// (markScaleTarget). The rendering itself is plan.RenderBinding, the
// synchronous driver's; this reads its inputs from the host, the
// interpreter through is (nil: loaded afresh). An invalid override policy
// that Holds tmpl fails the rendering (with its Message as the error):
// rendered without it, tmpl would lose the overrides it had while valid,
// so its Works stay as last rendered.
func RenderBinding(ctx context.Context, c client.Reader, is *Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, fleet string) (map[string]render.Work, error) {
	return RenderBindingFor(ctx, c, is, rb, tmpl, fleet, "")
}

// RenderBindingFor is RenderBinding for one cluster of the binding (all of
// them when only is empty): the work the binding controller writes for
// that cluster, rendered without the others' (plan.BindingInput.Only).
func RenderBindingFor(ctx context.Context, c client.Reader, is *Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, fleet, only string) (map[string]render.Work, error) {
	if len(rb.Spec.Clusters) == 0 {
		return nil, nil
	}
	op, cop, invalid, err := OverridePolicies(ctx, c, tmpl.GetNamespace())
	if err != nil {
		return nil, err
	}
	if p := HeldBy(invalid, tmpl); p != nil {
		return nil, errors.New(p.Message())
	}
	in, err := is.Load(ctx, c)
	if err != nil {
		return nil, err
	}
	if tmpl, err = markScaleTarget(ctx, c, in, rb, tmpl); err != nil {
		return nil, err
	}
	return plan.RenderBinding(plan.BindingInput{
		Template: tmpl,
		Binding:  &rb.Spec,
		Cluster: func(name string) (*api.Cluster, error) {
			var cl clusterv1.Cluster
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
				return nil, fmt.Errorf("read cluster %s: %w", name, err)
			}
			e := cl.Engine()
			return &e, nil
		},
		OverridePolicies:        op,
		ClusterOverridePolicies: cop,
		Fleet:                   fleet,
		Interpreter:             in,
		Only:                    only,
	})
}

// ReadTemplate returns the template a binding names, from the binding's
// namespace, or nil when there is none. Whether the template is of that
// namespace (a cluster-scoped kind has none) is for the caller to check.
func ReadTemplate(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding) (*unstructured.Unstructured, error) {
	r := rb.Spec.Resource
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind))
	if err := c.Get(ctx, client.ObjectKey{Namespace: rb.Namespace, Name: r.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read template %s %s/%s of %s: %w", r.Kind, rb.Namespace, r.Name, BindingRef(rb), err)
	}
	return u, nil
}

// ScaleTarget is the binding key of the workload an HPA template scales
// (spec.scaleTargetRef, in the HPA's namespace), and whether it names one.
func ScaleTarget(hpa client.Object) (client.ObjectKey, bool) {
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
// It reads the namespace's HPA bindings (through the index of an Indexed
// reader; other readers list every binding of the namespace), not its
// HPAs, so a control plane that propagates no HPA makes no HPA reads.
func markScaleTarget(ctx context.Context, c client.Reader, in *interpret.Interpreter, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	scalable := interpret.Of(tmpl).ReplicaField == "replicas" || in.RetentionCustomized(tmpl)
	if !scalable || interpret.RetainsReplicas(tmpl) {
		return tmpl, nil
	}
	// Every render of a scalable workload looks through its namespace's
	// bindings for an HPA's: read them from the cache as they are, not
	// deep-copied (they are only read here). A copy of each made every
	// render quadratic in the bindings of a namespace: at 2,000 a
	// namespace it was a quarter of the control plane's heap during a
	// cold start (issue 20). A reader that is not a cache ignores the option.
	opts := []client.ListOption{client.InNamespace(rb.Namespace), client.UnsafeDisableDeepCopy}
	if _, ok := c.(indexedReader); ok {
		opts = append(opts, client.MatchingFields{IndexBindingsByKind: interpret.HorizontalPodAutoscalerKind.String()})
	}
	var list workv1.ResourceBindingList
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list the bindings of namespace %s: %w", rb.Namespace, err)
	}
	self := client.ObjectKeyFromObject(rb)
	for i := range list.Items {
		hrb := &list.Items[i]
		if GroupKindOf(hrb.Spec.Resource) != interpret.HorizontalPodAutoscalerKind ||
			hrb.Labels[LabelPolicy] == "" || !hrb.DeletionTimestamp.IsZero() {
			continue
		}
		hpa, err := ReadTemplate(ctx, c, hrb)
		if err != nil {
			return nil, err
		}
		if hpa == nil || !hpa.GetDeletionTimestamp().IsZero() {
			continue
		}
		if hpa.GetNamespace() != hrb.Namespace {
			return nil, fmt.Errorf("%s: %s %s is not of namespace %q", BindingRef(hrb), hrb.Spec.Resource.Kind, hrb.Spec.Resource.Name, hrb.Namespace)
		}
		if key, ok := ScaleTarget(hpa); !ok || key != self {
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
