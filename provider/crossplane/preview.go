package crossplane

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// preview computes, without writing anything, what the control plane would
// do with the template: the same claim, schedule and render the detector,
// scheduler and execution run (controlplane/plan over the host's Clusters
// and policies). The template has no UID yet, so a Divided tie between
// equally weighted clusters may break the other way once it is created.
func (m *manifestClient) preview(ctx context.Context, tmpl *unstructured.Unstructured) (v1alpha1.ManifestObservation, error) {
	fleet, invalid, err := m.fleet(ctx, tmpl.GetNamespace())
	if err != nil {
		return v1alpha1.ManifestObservation{}, err
	}
	// The control plane would not render the template either.
	if p := hoststore.HeldBy(invalid, tmpl); p != nil {
		return v1alpha1.ManifestObservation{Preview: true, Message: p.Message()}, nil
	}
	results := plan.Plan(fleet, []*unstructured.Unstructured{tmpl})
	return previewObservation(results[0]), nil
}

// fleet is the host's snapshot for a template in namespace, with its
// valid policies only, as the control plane acts on them; and the invalid
// override policies, which hold what they may apply to.
func (m *manifestClient) fleet(ctx context.Context, namespace string) (plan.Fleet, []hoststore.InvalidPolicy, error) {
	c := m.host.client
	var clusters clusterv1.ClusterList
	if err := c.List(ctx, &clusters); err != nil {
		return plan.Fleet{}, nil, fmt.Errorf("list clusters in the host: %w", err)
	}
	pps, cpps, _, err := hoststore.PropagationPolicies(ctx, c, namespace)
	if err != nil {
		return plan.Fleet{}, nil, fmt.Errorf("read the host: %w", err)
	}
	ops, cops, invalid, err := hoststore.OverridePolicies(ctx, c, namespace)
	if err != nil {
		return plan.Fleet{}, nil, fmt.Errorf("read the host: %w", err)
	}
	f := plan.Fleet{Name: m.host.fleet, PropagationPolicies: pps, ClusterPropagationPolicies: cpps, OverridePolicies: ops, ClusterOverridePolicies: cops}
	for i := range clusters.Items {
		f.Clusters = append(f.Clusters, clusters.Items[i].Engine())
	}
	return f, invalid, nil
}

// previewObservation maps one plan result onto status.atProvider.
func previewObservation(res plan.Result) v1alpha1.ManifestObservation {
	obs := v1alpha1.ManifestObservation{Preview: true, AffinityTerm: res.AffinityTerm}
	if res.Policy != nil {
		obs.Policy = res.Policy.Kind + "/" + res.Policy.Name
	}
	switch {
	case res.Err != nil:
		obs.Message = res.Err.Error()
	case res.Policy == nil:
		obs.Message = "no PropagationPolicy claims the template"
	}
	if len(res.Reasons) > 0 {
		obs.Reasons = res.Reasons
	}
	for _, tc := range res.Placement {
		if obs.Placement == nil {
			obs.Placement = map[string]int32{}
		}
		obs.Placement[tc.Name] = tc.Replicas
		obs.Clusters = append(obs.Clusters, v1alpha1.ManifestClusterObservation{Name: tc.Name, Replicas: tc.Replicas, RenderedHash: res.Works[tc.Name].Hash,
			Suspended: slices.Contains(res.Suspended, tc.Name)})
	}
	sort.Slice(obs.Clusters, func(i, j int) bool { return obs.Clusters[i].Name < obs.Clusters[j].Name })
	return obs
}
