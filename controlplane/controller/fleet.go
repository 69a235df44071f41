package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// PropagationPolicies lists the host's propagation policies that may claim a
// template in namespace, in the engine's form. A cluster-scoped template
// (namespace "") is claimed by ClusterPropagationPolicies only: no
// namespaced policy is listed for it, so no tenant's policy ever reaches it.
func PropagationPolicies(ctx context.Context, c client.Reader, namespace string) ([]api.PropagationPolicy, []api.ClusterPropagationPolicy, error) {
	var pps policyv1.PropagationPolicyList
	if namespace != "" {
		if err := c.List(ctx, &pps, client.InNamespace(namespace)); err != nil {
			return nil, nil, fmt.Errorf("list propagation policies: %w", err)
		}
	}
	var cpps policyv1.ClusterPropagationPolicyList
	if err := c.List(ctx, &cpps); err != nil {
		return nil, nil, fmt.Errorf("list cluster propagation policies: %w", err)
	}
	pp := make([]api.PropagationPolicy, len(pps.Items))
	for i, p := range pps.Items {
		pp[i] = api.PropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	cpp := make([]api.ClusterPropagationPolicy, len(cpps.Items))
	for i, p := range cpps.Items {
		cpp[i] = api.ClusterPropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	return pp, cpp, nil
}

// OverridePolicies lists the host's override policies that may apply to a
// template in namespace, in the engine's form; only ClusterOverridePolicies
// for a cluster-scoped template (namespace "").
func OverridePolicies(ctx context.Context, c client.Reader, namespace string) ([]api.OverridePolicy, []api.ClusterOverridePolicy, error) {
	var ops policyv1.OverridePolicyList
	if namespace != "" {
		if err := c.List(ctx, &ops, client.InNamespace(namespace)); err != nil {
			return nil, nil, fmt.Errorf("list override policies: %w", err)
		}
	}
	var cops policyv1.ClusterOverridePolicyList
	if err := c.List(ctx, &cops); err != nil {
		return nil, nil, fmt.Errorf("list cluster override policies: %w", err)
	}
	op := make([]api.OverridePolicy, len(ops.Items))
	for i, p := range ops.Items {
		op[i] = api.OverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	cop := make([]api.ClusterOverridePolicy, len(cops.Items))
	for i, p := range cops.Items {
		cop[i] = api.ClusterOverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	}
	return op, cop, nil
}

// RenderBinding renders tmpl for each cluster the binding is scheduled to,
// with the override policies that match it, as the binding controller
// writes it into Works; fleet is the control plane's fleet name. A workload
// that a propagated HPA scales is rendered with the retain-replicas label
// (markScaleTarget). The Crossplane provider calls it to report the same
// rendered hashes.
func RenderBinding(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, fleet string) (map[string]render.Work, error) {
	if len(rb.Spec.Clusters) == 0 {
		return nil, nil
	}
	op, cop, err := OverridePolicies(ctx, c, tmpl.GetNamespace())
	if err != nil {
		return nil, err
	}
	in, err := LoadInterpreter(ctx, c)
	if err != nil {
		return nil, err
	}
	if tmpl, err = markScaleTarget(ctx, c, in, rb, tmpl); err != nil {
		return nil, err
	}
	targets := make([]render.Target, 0, len(rb.Spec.Clusters))
	for _, tc := range rb.Spec.Clusters {
		var cl clusterv1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, &cl); err != nil {
			return nil, fmt.Errorf("read cluster %s: %w", tc.Name, err)
		}
		e := cl.Engine()
		targets = append(targets, render.Target{Cluster: &e, Replicas: tc.Replicas, Labels: render.PreservedLabels(&rb.Spec, tc.Name)})
	}
	scheduling := api.ReplicaSchedulingTypeDuplicated
	if p := rb.Spec.Placement; p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType != "" {
		scheduling = p.ReplicaScheduling.ReplicaSchedulingType
	}
	return render.Render(render.Input{
		Template:          tmpl,
		Clusters:          targets,
		Overrides:         policy.MatchOverrides(tmpl, op, cop),
		Fleet:             fleet,
		ReplicaScheduling: scheduling,
		Interpreter:       in,
	})
}
