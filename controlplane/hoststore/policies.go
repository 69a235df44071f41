package hoststore

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
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
