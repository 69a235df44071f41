package crossplane

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// Health values of status.atProvider, the control plane's own.
const (
	healthHealthy   = string(api.ResourceHealthy)
	healthUnhealthy = string(api.ResourceUnhealthy)
	healthUnknown   = string(api.ResourceUnknown)
)

// manifestObservation maps the template's binding, its aggregated .status
// and the per-cluster rendered hashes onto status.atProvider.
func manifestObservation(rb *workv1.ResourceBinding, status map[string]any, hashes map[string]string) v1alpha1.ManifestObservation {
	var obs v1alpha1.ManifestObservation
	if len(status) > 0 {
		if raw, err := json.Marshal(status); err == nil {
			obs.Status = &runtime.RawExtension{Raw: raw}
		}
	}
	if rb == nil {
		obs.Message = "no PropagationPolicy claims the template yet"
		return obs
	}
	if kind, name, ok := strings.Cut(rb.Labels[hoststore.LabelPolicy], "."); ok {
		obs.Policy = kind + "/" + name
	}
	obs.AffinityTerm = rb.Status.SchedulerObservedAffinityName
	if c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled); c != nil && c.Status == metav1.ConditionFalse {
		obs.Message = c.Message
	}
	reported := make(map[string]api.AggregatedStatusItem, len(rb.Status.AggregatedStatus))
	for _, item := range rb.Status.AggregatedStatus {
		reported[item.ClusterName] = item
	}
	placed := map[string]bool{}
	for _, tc := range rb.Spec.Clusters {
		if obs.Placement == nil {
			obs.Placement = map[string]int32{}
		}
		obs.Placement[tc.Name] = tc.Replicas
		placed[tc.Name] = true
		c := v1alpha1.ManifestClusterObservation{Name: tc.Name, Replicas: tc.Replicas, RenderedHash: hashes[tc.Name], Health: healthUnknown}
		c.Suspended = rb.Spec.Suspension != nil && api.DispatchSuspended(&rb.Spec.Suspension.Suspension, tc.Name)
		if item, ok := reported[tc.Name]; ok {
			c.Applied, c.Message = item.Applied, item.AppliedMessage
			if item.Health != "" {
				c.Health = string(item.Health)
			}
		}
		obs.Clusters = append(obs.Clusters, c)
	}
	// Clusters the template is leaving (pending removal, graceful eviction).
	for _, item := range rb.Status.AggregatedStatus {
		if !placed[item.ClusterName] {
			obs.Clusters = append(obs.Clusters, v1alpha1.ManifestClusterObservation{Name: item.ClusterName, Applied: item.Applied, Health: string(item.Health), Message: item.AppliedMessage})
		}
	}
	sort.Slice(obs.Clusters, func(i, j int) bool { return obs.Clusters[i].Name < obs.Clusters[j].Name })
	obs.Health = placementHealth(obs.Clusters, placed)
	return obs
}

// placementHealth is Healthy when every placed cluster is, Unhealthy when
// one is, otherwise Unknown; empty without a placement.
func placementHealth(clusters []v1alpha1.ManifestClusterObservation, placed map[string]bool) string {
	if len(placed) == 0 {
		return ""
	}
	health := healthHealthy
	for _, c := range clusters {
		if !placed[c.Name] {
			continue
		}
		switch c.Health {
		case healthHealthy:
		case healthUnhealthy:
			return healthUnhealthy
		default:
			health = healthUnknown
		}
	}
	return health
}

// manifestReadiness is the Manifest's Ready condition: Available when the
// binding is fully applied at its current generation and every cluster it
// is placed on reports Healthy.
func manifestReadiness(rb *workv1.ResourceBinding) xpv2.Condition {
	if rb == nil {
		return xpv2.Unavailable().WithMessage("no PropagationPolicy claims the template yet")
	}
	if c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled); c != nil && c.Status == metav1.ConditionFalse {
		return xpv2.Unavailable().WithMessage("not scheduled: " + c.Message)
	}
	applied := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied)
	switch {
	case applied == nil || applied.ObservedGeneration < rb.Generation:
		return xpv2.Creating().WithMessage("waiting for the control plane to apply the template to its clusters")
	case applied.Status != metav1.ConditionTrue:
		return xpv2.Unavailable().WithMessage(fmt.Sprintf("not applied: %s: %s", applied.Reason, applied.Message))
	}
	health := map[string]api.ResourceHealth{}
	for _, item := range rb.Status.AggregatedStatus {
		health[item.ClusterName] = item.Health
	}
	var unhealthy, pending []string
	for _, tc := range rb.Spec.Clusters {
		switch health[tc.Name] {
		case api.ResourceHealthy:
		case api.ResourceUnhealthy:
			unhealthy = append(unhealthy, tc.Name)
		default:
			pending = append(pending, tc.Name)
		}
	}
	switch {
	case len(unhealthy) > 0:
		return xpv2.Unavailable().WithMessage("unhealthy in " + strings.Join(unhealthy, ", "))
	case len(pending) > 0:
		return xpv2.Creating().WithMessage("not yet healthy in " + strings.Join(pending, ", "))
	}
	return xpv2.Available()
}

// renderedHashes renders the template for the binding's clusters exactly as
// the control plane's execution does (controlplane/render with the matching
// override policies and the host's fleet name), and returns each cluster's
// flotilla.io/rendered-hash. A template that cannot be rendered has no
// hashes; the binding's FullyApplied condition says why.
func (m *manifestClient) renderedHashes(ctx context.Context, tmpl *unstructured.Unstructured, rb *workv1.ResourceBinding) (map[string]string, error) {
	works, err := hoststore.RenderBinding(ctx, m.host.client, m.host.interpreters, rb, tmpl, m.host.fleet)
	if err != nil {
		// A cluster leaving the fleet, or a template the engine refuses:
		// the binding's FullyApplied condition says why; no hashes meanwhile.
		return nil, nil //nolint:nilerr // reported by the binding's FullyApplied condition
	}
	hashes := make(map[string]string, len(works))
	for name, w := range works {
		hashes[name] = w.Hash
	}
	return hashes, nil
}
