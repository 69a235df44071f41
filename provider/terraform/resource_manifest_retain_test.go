package terraform

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// retainConfig is a Deployment of 2 replicas in east, with Karmada's
// retain-replicas label when retain is set.
func (m *members) retainConfig(retain bool, image string) string {
	labels := `{ app = "web" }`
	if retain {
		labels = `{ app = "web", "resourcetemplate.karmada.io/retain-replicas" = "true" }`
	}
	return m.clusterHCL("east", "") + policyHCL("web", "shop", "apps/v1", "Deployment", []string{"east"}, "") + webDeployment{replicas: 2, image: image, labels: labels, attrs: webAttrs("east")}.HCL()
}

// TestAccManifestRetainReplicas: a Deployment with the retain-replicas
// label is created with its 2 replicas; once the member scales it to 5
// through the scale subresource, as an HPA does, refresh reports no drift
// and the plan is empty, an image change rolls out and leaves 5 replicas,
// and removing the label gives replicas back to flotilla (2).
func TestAccManifestRetainReplicas(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east")
	const addr = "flotilla_manifest.web"
	scaleTo := func(n int32) func() {
		return func() {
			ctx := context.Background()
			deployments := m.clients["east"].AppsV1().Deployments("shop")
			s, err := deployments.GetScale(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get the scale of shop/web in east: %v", err)
			}
			s.Spec.Replicas = n
			if _, err := deployments.UpdateScale(ctx, "web", s, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"}); err != nil {
				t.Fatalf("scale shop/web in east to %d: %v", n, err)
			}
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: m.retainConfig(true, "nginx:1.27"),
				Check:  m.checkReplicas(t, "shop", "web", map[string]int32{"east": 2}, map[string]string{"east": "nginx:1.27"}),
			},
			{
				// The member scaled it: not drift, nothing to apply.
				PreConfig:        scaleTo(5),
				Config:           m.retainConfig(true, "nginx:1.27"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            m.checkReplicas(t, "shop", "web", map[string]int32{"east": 5}, map[string]string{"east": "nginx:1.27"}),
			},
			{
				Config:   m.retainConfig(true, "nginx:1.27"),
				PlanOnly: true,
			},
			{
				// An image change rolls out and leaves the member's replicas.
				Config: m.retainConfig(true, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					expectRenderedImage(addr, "east", "nginx:1.28"),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 5}, map[string]string{"east": "nginx:1.28"}),
			},
			{
				// Without the label the replicas are flotilla's again.
				Config: m.retainConfig(false, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 2}, map[string]string{"east": "nginx:1.28"}),
			},
			{
				// The member scales it again: now that is drift, shown and undone.
				PreConfig: scaleTo(4),
				Config:    m.retainConfig(false, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 2}, map[string]string{"east": "nginx:1.28"}),
			},
		},
	})
}
