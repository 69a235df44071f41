package multicluster

import (
	"fmt"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// FlotillaMultiClusterServiceGK is flotilla's MultiClusterService
// (networking.flotilla.io), the same shape as Karmada's.
var FlotillaMultiClusterServiceGK = schema.GroupKind{Group: api.FlotillaNetworkingGroup, Kind: api.KindMultiClusterService}

// CrossClusterSets returns the providers and consumers of a
// MultiClusterService of spec whose Service the fleet places on placed
// (the clusters its trusted binding propagates it to), both sorted, and
// why each listed cluster left out is left out.
//
// Providers are the listed providerClusters, or every placed cluster when
// none is listed; consumers the same with consumerClusters. Both are
// restricted to placed: a provider that does not run the Service has no
// endpoints of it, and a consumer outside the placement is a cluster the
// namespace's propagation policies do not reach, so listing it gives a
// tenant nothing there. Karmada takes an empty list as every cluster of
// the fleet and propagates the Service to consumers that lack it; flotilla
// never lets a MultiClusterService widen where its namespace writes.
func CrossClusterSets(spec api.MultiClusterServiceSpec, placed []string) (providers, consumers, whyNot []string) {
	in := sets.New(placed...)
	pick := func(sel []api.ClusterSelector, role string) []string {
		if len(sel) == 0 {
			return sets.List(in)
		}
		out := sets.New[string]()
		for _, s := range sel {
			if in.Has(s.Name) {
				out.Insert(s.Name)
				continue
			}
			whyNot = append(whyNot, fmt.Sprintf("%s cluster %s: the Service is not propagated to it", role, s.Name))
		}
		return sets.List(out)
	}
	return pick(spec.ProviderClusters, "provider"), pick(spec.ConsumerClusters, "consumer"), whyNot
}

// CrossCluster is what the consumer cluster gets of a MultiClusterService
// for the Service namespace/name: one EndpointSlice per collected slice of
// that Service from a provider other than the consumer itself (its own
// endpoints are already its Service's), labelled with the Service's own
// name as Karmada does (no derived- Service), so the consumer's Service of
// that name load-balances over the providers' endpoints too. The slices
// carry flotilla's managed-by label, so the consumer's EndpointSlice
// controller leaves them alone and they are never collected back.
// collected must be restricted to the Service's namespace and name; a
// slice of another is an error, as in Import. The slices are in name
// order.
func CrossCluster(namespace, name, consumer string, providers []string, collected []discoveryv1.EndpointSlice) ([]*unstructured.Unstructured, error) {
	from := sets.New(providers...)
	var out []*unstructured.Unstructured
	for i := range collected {
		c := &collected[i]
		if c.Labels[LabelServiceNamespace] != namespace || c.Labels[LabelServiceName] != name {
			return nil, fmt.Errorf("MultiClusterService %s/%s: collected EndpointSlice %s/%s is of Service %s/%s", namespace, name,
				c.Namespace, c.Name, c.Labels[LabelServiceNamespace], c.Labels[LabelServiceName])
		}
		cluster := c.Labels[LabelSourceCluster]
		if cluster == consumer || !from.Has(cluster) {
			continue
		}
		s := &discoveryv1.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace,
				Name:      CrossClusterSliceName(name, cluster, c.Name),
				Labels: map[string]string{
					discoveryv1.LabelServiceName: name,
					discoveryv1.LabelManagedBy:   ManagedBy,
					LabelSourceCluster:           cluster,
					LabelServiceName:             name,
				},
			},
			AddressType: c.AddressType,
			Endpoints:   endpoints(c.Endpoints),
			Ports:       slices.Clone(c.Ports),
		}
		u, err := toUnstructured(s)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out, nil
}

// CrossClusterSliceName is the name, in a consumer, of the slice that
// carries the endpoints of one collected slice of cluster to the Service
// name. The prefix says whose slice it is; the hash keeps the slices of
// different clusters and collected slices apart (Karmada prefixes the
// provider's name instead, which can exceed the name limit).
func CrossClusterSliceName(name, cluster, collected string) string {
	return hashedName(name+"-mcs", cluster+"/"+collected)
}

// The condition of a MultiClusterService's status.
const (
	// ConditionServiceApplied is Karmada's condition type of a
	// MultiClusterService: True while some consumer gets some provider's
	// endpoints; its message names the providers and consumers, then why
	// each listed cluster is left out.
	ConditionServiceApplied = "ServiceApplied"
	// ReasonCrossClusterServed (True): providers and consumers are set.
	ReasonCrossClusterServed = "CrossClusterServed"
	// ReasonNoProviderCluster (False): no cluster provides the Service.
	ReasonNoProviderCluster = "NoProviderCluster"
	// ReasonNoConsumerCluster (False): no cluster other than the
	// providers' own consumes it.
	ReasonNoConsumerCluster = "NoConsumerCluster"
	// ReasonInvalid (False): the MultiClusterService is refused.
	ReasonInvalid = "Invalid"
)

// CrossClusterCondition is the ServiceApplied condition of a
// MultiClusterService whose Service providers provide (of those its
// spec lists or places) and consumers consume, whyNot saying why each
// other cluster is left out (already naming it). A consumer that is the
// only provider gets nothing from the others, so a single cluster that
// both provides and consumes is not served. Times are left to the caller.
func CrossClusterCondition(providers, consumers, whyNot []string) metav1.Condition {
	c := metav1.Condition{Type: ConditionServiceApplied, Status: metav1.ConditionTrue, Reason: ReasonCrossClusterServed}
	served := false
	for _, consumer := range consumers {
		for _, p := range providers {
			if p != consumer {
				served = true
			}
		}
	}
	switch {
	case len(providers) == 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNoProviderCluster
	case !served:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNoConsumerCluster
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	c.Message = "providers: " + list(providers) + "; consumers: " + list(consumers)
	if len(whyNot) > 0 {
		c.Message += "; " + strings.Join(whyNot, "; ")
	}
	return c
}
