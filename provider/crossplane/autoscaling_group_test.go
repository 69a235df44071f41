package crossplane

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestAutoscalerGroupFollowsAPIGroups: the host object of a FederatedHPA
// managed resource is in the group the process serves, read when it is
// built: autoscaling.flotilla.io, and autoscaling.karmada.io once
// `crossplane --api-groups=karmada` chose Karmada's groups (a group kept
// from package initialisation would write a kind the Karmada-mode host
// does not serve).
func TestAutoscalerGroupFollowsAPIGroups(t *testing.T) {
	mg := &v1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "u"}}
	mg.Spec.ForProvider.MaxReplicas = 2
	c := &specClient[*v1alpha1.FederatedHPA, *autoscalingv1.FederatedHPA]{specObject: federatedHPAKind}
	for _, tc := range []struct {
		groups apis.Groups
		want   string
	}{
		{apis.FlotillaGroups, "autoscaling.flotilla.io/v1alpha1"},
		{apis.KarmadaGroups, "autoscaling.karmada.io/v1alpha1"},
	} {
		apis.Use(tc.groups)
		u, err := c.desiredObject(mg)
		apis.Use(apis.FlotillaGroups)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetAPIVersion() != tc.want || u.GetKind() != "FederatedHPA" || u.GetNamespace() != "team" || u.GetName() != "web" {
			t.Errorf("with %v: host object %s %s %s/%s, want %s FederatedHPA team/web", tc.groups, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName(), tc.want)
		}
	}
}
