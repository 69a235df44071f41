package multicluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestCrossClusterSets: empty lists mean the Service's placement, listed
// clusters are restricted to it (a tenant listing a cluster its policies
// do not reach gets nothing there), and each one left out is said.
func TestCrossClusterSets(t *testing.T) {
	sel := func(names ...string) []api.ClusterSelector {
		var out []api.ClusterSelector
		for _, n := range names {
			out = append(out, api.ClusterSelector{Name: n})
		}
		return out
	}
	placed := []string{"c", "a", "b"}
	for _, tc := range []struct {
		name                string
		spec                api.MultiClusterServiceSpec
		providers, consumer []string
		whyNot              []string
	}{
		{name: "empty lists are the placement", providers: []string{"a", "b", "c"}, consumer: []string{"a", "b", "c"}},
		{name: "listed within the placement", spec: api.MultiClusterServiceSpec{ProviderClusters: sel("b", "a"), ConsumerClusters: sel("c")},
			providers: []string{"a", "b"}, consumer: []string{"c"}},
		{name: "listed outside the placement get nothing",
			spec:      api.MultiClusterServiceSpec{ProviderClusters: sel("a", "other-tenant"), ConsumerClusters: sel("secret", "c")},
			providers: []string{"a"}, consumer: []string{"c"},
			whyNot: []string{"provider cluster other-tenant: the Service is not propagated to it", "consumer cluster secret: the Service is not propagated to it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c, why := CrossClusterSets(tc.spec, placed)
			if d := cmp.Diff(tc.providers, p); d != "" {
				t.Errorf("providers (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.consumer, c); d != "" {
				t.Errorf("consumers (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.whyNot, why); d != "" {
				t.Errorf("why not (-want +got):\n%s", d)
			}
		})
	}
	if p, c, _ := CrossClusterSets(api.MultiClusterServiceSpec{ConsumerClusters: sel("a")}, nil); len(p)+len(c) != 0 {
		t.Errorf("a Service placed nowhere: providers %v, consumers %v; want none", p, c)
	}
}

// TestCrossCluster: a consumer gets the other providers' endpoints under
// the Service's own name, never its own nor a non-provider's, and a
// collected slice of another Service is an error, not a leak.
func TestCrossCluster(t *testing.T) {
	collected := func(cluster, ns, svc, ip string) discoveryv1.EndpointSlice {
		s := Collect(cluster, "flotilla-es-"+cluster, memberSlice(ns, svc, func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{ip} }))
		return *s
	}
	have := []discoveryv1.EndpointSlice{
		collected("a", "shop", "web", "10.0.0.1"),
		collected("b", "shop", "web", "10.0.0.2"),
		collected("c", "shop", "web", "10.0.0.3"),
	}
	objs, err := CrossCluster("shop", "web", "a", []string{"a", "b"}, have)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("consumer a got %d slices, want only b's (its own and non-provider c's left out)", len(objs))
	}
	s := objs[0]
	if got := s.GetLabels(); got[discoveryv1.LabelServiceName] != "web" || got[discoveryv1.LabelManagedBy] != ManagedBy || got[LabelSourceCluster] != "b" {
		t.Errorf("labels %v: want the Service's own name web, managed by %s, from b", got, ManagedBy)
	}
	if s.GetNamespace() != "shop" || !strings.HasPrefix(s.GetName(), "web-mcs-") {
		t.Errorf("slice %s/%s: want shop/web-mcs-<hash>", s.GetNamespace(), s.GetName())
	}
	addrs, _, _ := unstructuredStrings(s.Object, "endpoints", 0, "addresses")
	if d := cmp.Diff([]string{"10.0.0.2"}, addrs); d != "" {
		t.Errorf("addresses (-want +got):\n%s", d)
	}
	if _, found := s.Object["endpoints"].([]any)[0].(map[string]any)["targetRef"]; found {
		t.Error("a source cluster's pod reference reached the consumer")
	}
	if CrossClusterSliceName("web", "a", have[0].Name) == CrossClusterSliceName("web", "b", have[0].Name) {
		t.Error("slices of two clusters share a name")
	}

	leak := append(have, collected("b", "other", "web", "10.9.9.9"))
	if _, err := CrossCluster("shop", "web", "a", []string{"b"}, leak); err == nil || !strings.Contains(err.Error(), "MultiClusterService shop/web") || !strings.Contains(err.Error(), "other/web") {
		t.Errorf("a slice of another namespace's Service: error %v, want one naming both", err)
	}
}

// TestContinuousOnlyMultiClusterService: both groups of the kind are
// refused by the synchronous driver.
func TestContinuousOnlyMultiClusterService(t *testing.T) {
	for _, gk := range []schema.GroupKind{MultiClusterServiceGK, FlotillaMultiClusterServiceGK, ServiceExportGK} {
		if !ContinuousOnly(gk) {
			t.Errorf("%s is not continuous-only", gk)
		}
	}
	if ContinuousOnly(schema.GroupKind{Group: api.FlotillaNetworkingGroup, Kind: "Ingress"}) {
		t.Error("another kind of the networking group is refused")
	}
}

func unstructuredStrings(obj map[string]any, list string, i int, field string) ([]string, bool, error) {
	items, _ := obj[list].([]any)
	if i >= len(items) {
		return nil, false, nil
	}
	raw, _ := items[i].(map[string]any)[field].([]any)
	var out []string
	for _, r := range raw {
		out = append(out, r.(string))
	}
	return out, true, nil
}

// TestCrossClusterCondition: served only when some consumer gets some
// other cluster's endpoints; the message names both sets and why each
// left-out cluster is.
func TestCrossClusterCondition(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		providers, consumers []string
		whyNot               []string
		status, reason, msg  string
	}{
		{name: "served", providers: []string{"a", "b"}, consumers: []string{"b"}, whyNot: []string{"consumer cluster c: the Service is not propagated to it"},
			status: "True", reason: ReasonCrossClusterServed, msg: "providers: a, b; consumers: b; consumer cluster c: the Service is not propagated to it"},
		{name: "no provider", consumers: []string{"b"}, status: "False", reason: ReasonNoProviderCluster, msg: "providers: none; consumers: b"},
		{name: "the only provider consumes itself", providers: []string{"a"}, consumers: []string{"a"}, status: "False", reason: ReasonNoConsumerCluster, msg: "providers: a; consumers: a"},
		{name: "no consumer", providers: []string{"a"}, status: "False", reason: ReasonNoConsumerCluster, msg: "providers: a; consumers: none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CrossClusterCondition(tc.providers, tc.consumers, tc.whyNot)
			got := []string{c.Type, string(c.Status), c.Reason, c.Message}
			if d := cmp.Diff([]string{ConditionServiceApplied, tc.status, tc.reason, tc.msg}, got); d != "" {
				t.Errorf("condition (-want +got):\n%s", d)
			}
		})
	}
}

// TestImportStatusClusters: each source cluster once, sorted, whatever the
// order and number of its slices.
func TestImportStatusClusters(t *testing.T) {
	mk := func(cluster, slice string) discoveryv1.EndpointSlice {
		return *Collect(cluster, "flotilla-es-"+cluster, memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.Name = slice }))
	}
	got := ImportStatusClusters([]discoveryv1.EndpointSlice{mk("west", "a"), mk("east", "b"), mk("west", "c")})
	want := []any{map[string]any{"cluster": "east"}, map[string]any{"cluster": "west"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("clusters (-want +got):\n%s", d)
	}
	if got := ImportStatusClusters(nil); len(got) != 0 || got == nil {
		t.Errorf("no slices: %v, want an empty list", got)
	}
}
