package mcs_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestMultiClusterService serves shop/web across three real members with
// a MultiClusterService (providers: the Service's placement; consumers b
// and c). The Service is placed on a and b first: b gets a's endpoints
// under the Service's own name (never its own), while c, listed but
// outside the placement, gets nothing and the condition says why. Widening
// the placement to c serves it; narrowing it off a withdraws a's endpoints
// from every consumer; deleting the MultiClusterService removes every
// slice flotilla gave the consumers and the host's copies. Throughout, a
// tenant's MultiClusterService of the same name in another namespace, whose
// Service is placed on every cluster, receives none of shop's endpoints.
func TestMultiClusterService(t *testing.T) {
	f := controllertest.StartFleet(t, 3)
	hub := f.Hub
	a, b, c := f.Names[0], f.Names[1], f.Names[2]
	for _, ns := range []string{"shop", "intruder"} {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		for _, n := range f.Names {
			testkit.MustCreate(t, f.Members[n], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		testkit.MustCreate(t, hub, service(ns, "web"))
	}
	// The members' EndpointSlice controllers, as they would for the
	// propagated Service (the members run no kube-controller-manager).
	ips := map[string]string{a: "10.0.0.1", b: "10.0.0.2", c: "10.0.0.3"}
	for _, n := range f.Names {
		testkit.MustCreate(t, f.Members[n], slice("shop", "web-"+n, "web", ips[n]))
	}
	servicePolicy(t, hub, "shop", a, b)
	servicePolicy(t, hub, "intruder", a, b, c)

	start := time.Now()
	f.StartControlPlane(t)
	t.Cleanup(func() { dumpOnFailure(t, hub) })
	createCrossCluster(t, hub, "intruder", "spec:\n  types: [CrossCluster]\n  providerClusters: [{name: %s}, {name: %s}]\n  consumerClusters: [{name: %s}]\n", a, b, c)
	createCrossCluster(t, hub, "shop", "spec:\n  types: [CrossCluster]\n  consumerClusters: [{name: %s}, {name: %s}]\n", b, c)

	waitServed(t, f.Members[b], "shop", ips[a])
	t.Logf("first endpoints served in %s", time.Since(start).Round(time.Millisecond))
	waitApplied(t, hub, "shop", "True", fmt.Sprintf("providers: %s, %s; consumers: %s; consumer cluster %s: the Service is not propagated to it", a, b, b, c))
	// c is listed but outside the Service's placement: nothing, in either
	// namespace; the intruder's consumer c gets none of shop's endpoints.
	assertNotServed(t, f.Members[c], "shop")
	assertNotServed(t, f.Members[c], "intruder")
	waitApplied(t, hub, "intruder", "True", fmt.Sprintf("providers: %s, %s; consumers: %s", a, b, c))
	assertNotServed(t, f.Members[c], "intruder")
	assertNotServed(t, f.Members[c], "shop")

	// Widened: c consumes (a's and b's, not its own) and provides to b.
	setPlacement(t, hub, "shop", a, b, c)
	waitServed(t, f.Members[c], "shop", ips[a], ips[b])
	waitServed(t, f.Members[b], "shop", ips[a], ips[c])
	assertNotServed(t, f.Members[c], "intruder")

	// a leaves the placement: its endpoints leave every consumer.
	setPlacement(t, hub, "shop", b, c)
	waitServed(t, f.Members[c], "shop", ips[b])
	waitServed(t, f.Members[b], "shop", ips[c])

	// Deleting the MultiClusterService cleans up the consumers, its Works
	// and the host's copies (no ServiceExport collects them).
	if err := hub.Delete(t.Context(), &networkingv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	waitServed(t, f.Members[b], "shop")
	waitServed(t, f.Members[c], "shop")
	testkit.Eventually(t, deadline, "no collected slices nor Works of shop/web", func() (bool, string) {
		got, err := shared.CollectedSlices(t.Context(), hub, "shop", "web")
		if err != nil {
			return false, err.Error()
		}
		var works workv1.WorkList
		if err := hub.List(t.Context(), &works, client.MatchingLabels{shared.LabelCrossClusterNamespace: "shop"}); err != nil {
			return false, err.Error()
		}
		return len(got) == 0 && len(works.Items) == 0, fmt.Sprintf("slices %v, %d works", sliceNames(got), len(works.Items))
	})
	// The members' own slices are untouched.
	for _, n := range f.Names {
		var s discoveryv1.EndpointSlice
		if err := f.Members[n].Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web-" + n}, &s); err != nil {
			t.Errorf("cluster %s's own slice: %v", n, err)
		}
	}
	t.Logf("done in %s", time.Since(start).Round(time.Millisecond))
}

// servicePolicy places the Service web of ns on clusters.
func servicePolicy(t *testing.T, hub client.Client, ns string, clusters ...string) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	testkit.MustYAML(t, pp, "spec:\n  resourceSelectors:\n  - {apiVersion: v1, kind: Service, name: web}\n  placement:\n    clusterAffinity: {clusterNames: [%s]}\n", strings.Join(clusters, ", "))
	testkit.MustCreate(t, hub, pp)
}

// setPlacement changes the clusters of ns's Service policy.
func setPlacement(t *testing.T, hub client.Client, ns string, clusters ...string) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() { pp.Spec.Placement.ClusterAffinity.ClusterNames = clusters })
}

// createCrossCluster creates the MultiClusterService web of ns from YAML.
func createCrossCluster(t *testing.T, hub client.Client, ns, spec string, args ...any) {
	t.Helper()
	m := &networkingv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	testkit.MustYAML(t, m, spec, args...)
	testkit.MustCreate(t, hub, m)
}

// served are the endpoint addresses of the slices flotilla gave the
// Service web of ns in a member, sorted.
func served(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := c.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelManagedBy: multicluster.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, s := range list.Items {
		if s.Labels[discoveryv1.LabelServiceName] != "web" {
			t.Errorf("slice %s/%s is labelled for Service %q, want the Service's own name web", ns, s.Name, s.Labels[discoveryv1.LabelServiceName])
		}
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	slices.Sort(out)
	return out
}

func waitServed(t *testing.T, c client.Client, ns string, want ...string) {
	t.Helper()
	want = append([]string{}, want...)
	slices.Sort(want)
	testkit.Eventually(t, deadline, fmt.Sprintf("%s/web served %v", ns, want), func() (bool, string) {
		got := served(t, c, ns)
		return slices.Equal(got, want), fmt.Sprint(got)
	})
}

// assertNotServed fails if flotilla gave the Service web of ns any slice
// in the member.
func assertNotServed(t *testing.T, c client.Client, ns string) {
	t.Helper()
	if got := served(t, c, ns); len(got) > 0 {
		t.Errorf("%s/web was given endpoints %v, want none", ns, got)
	}
}

// waitApplied waits for the ServiceApplied condition of ns/web.
func waitApplied(t *testing.T, hub client.Client, ns, status, message string) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%s/web ServiceApplied %s %q", ns, status, message), func() (bool, string) {
		var m networkingv1.MultiClusterService
		if err := hub.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &m); err != nil {
			return false, err.Error()
		}
		cond := apimeta.FindStatusCondition(m.Status.Conditions, multicluster.ConditionServiceApplied)
		if cond == nil {
			return false, "no condition"
		}
		return string(cond.Status) == status && cond.Message == message, fmt.Sprintf("%s %s", cond.Status, cond.Message)
	})
}
