package crossplane

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestMultiClusterServiceHostObject: the host object of a
// MultiClusterService managed resource is in the networking group the
// process serves (networking.karmada.io under --api-groups=karmada), and
// its validation names the managed resource's fields under
// spec.forProvider.
func TestMultiClusterServiceHostObject(t *testing.T) {
	mg := &v1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "u"}}
	mg.Spec.ForProvider.Types = []api.ExposureType{api.ExposureTypeCrossCluster}
	c := &specClient[*v1alpha1.MultiClusterService, *networkingv1.MultiClusterService]{specObject: multiClusterServiceKind}
	for _, tc := range []struct {
		groups apis.Groups
		want   string
	}{
		{apis.FlotillaGroups, "networking.flotilla.io/v1alpha1"},
		{apis.KarmadaGroups, "networking.karmada.io/v1alpha1"},
	} {
		apis.Use(tc.groups)
		u, err := c.desiredObject(mg)
		apis.Use(apis.FlotillaGroups)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetAPIVersion() != tc.want || u.GetKind() != "MultiClusterService" || u.GetNamespace() != "team" || u.GetName() != "web" {
			t.Errorf("with %v: host object %s %s %s/%s, want %s MultiClusterService team/web", tc.groups, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName(), tc.want)
		}
	}

	for _, tc := range []struct {
		name string
		spec api.MultiClusterServiceSpec
		want string // "" when valid
	}{
		{"cross cluster", api.MultiClusterServiceSpec{Types: []api.ExposureType{api.ExposureTypeCrossCluster}, ProviderClusters: []api.ClusterSelector{{Name: "east"}}}, ""},
		{"no types", api.MultiClusterServiceSpec{}, "spec.forProvider.types: Required value"},
		{"load balancer", api.MultiClusterServiceSpec{Types: []api.ExposureType{api.ExposureTypeLoadBalancer}}, "spec.forProvider.types[0]: Forbidden"},
		{"bad consumer", api.MultiClusterServiceSpec{Types: []api.ExposureType{api.ExposureTypeCrossCluster}, ConsumerClusters: []api.ClusterSelector{{Name: "East_1"}}}, "spec.forProvider.consumerClusters[0].name: Invalid value"},
	} {
		mg := mg.DeepCopy()
		mg.Spec.ForProvider = tc.spec
		got := multiClusterServiceKind.validate(mg).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: refused: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, got, tc.want)
		}
	}
}
