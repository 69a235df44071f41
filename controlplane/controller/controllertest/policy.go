package controllertest

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// WebPolicy starts PropagationPolicy default/web, which selects Deployment
// web and places it on the named clusters.
func WebPolicy(clusters ...string) *apitest.PropagationPolicyWrapper {
	return apitest.MakePropagationPolicy("web", "default").SelectName("apps/v1", "Deployment", "web").ClusterNames(clusters...)
}

// CreatePolicy creates the built policy on the host and returns it.
func CreatePolicy(t testing.TB, hub client.Client, w *apitest.PropagationPolicyWrapper) *policyv1.PropagationPolicy {
	t.Helper()
	p := w.Obj()
	pp := &policyv1.PropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	testkit.MustCreate(t, hub, pp)
	return pp
}

// PlaceOn updates the policy on the host to place on the named clusters
// (placement.clusterAffinity.clusterNames), rereading it on a conflict.
func PlaceOn(t testing.TB, hub client.Client, pp *policyv1.PropagationPolicy, clusters ...string) {
	t.Helper()
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Placement.ClusterAffinity.ClusterNames = clusters
	})
}
