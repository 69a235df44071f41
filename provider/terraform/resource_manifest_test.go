package terraform

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// members is a set of real member clusters for acceptance tests, named as
// the Terraform configuration names them.
type members struct {
	env     *testenv.Fleet
	byName  map[string]*testenv.Cluster
	clients map[string]kubernetes.Interface
}

// startFleet starts one Full member per name (pods run, so rollouts become healthy).
func startFleet(t *testing.T, names ...string) *members {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Clusters: len(names)})
	m := &members{env: env, byName: map[string]*testenv.Cluster{}, clients: map[string]kubernetes.Interface{}}
	for i, name := range names {
		c := env.Clusters[i]
		m.byName[name] = c
		cs := c.Clientset(t)
		m.clients[name] = cs
	}
	return m
}

// clusterHCL declares a flotilla_cluster for a member, with extra attributes.
func (m *members) clusterHCL(name string, extra string) string {
	return memberClusterHCL(name, m.byName[name], extra)
}

func (m *members) deployment(t *testing.T, cluster, namespace, name string) *appsv1.Deployment {
	t.Helper()
	d, err := m.clients[cluster].AppsV1().Deployments(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get deployment in %s: %v", cluster, err)
	}
	return d
}

// checkReplicas asserts, with client-go, the replicas and image of the
// Deployment in every member; a missing cluster means the object must not exist there.
func (m *members) checkReplicas(t *testing.T, namespace, name string, want map[string]int32, images map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for cluster := range m.byName {
			d := m.deployment(t, cluster, namespace, name)
			n, placed := want[cluster]
			switch {
			case !placed && d != nil:
				return fmt.Errorf("cluster %s: deployment %s/%s exists but should not", cluster, namespace, name)
			case placed && d == nil:
				return fmt.Errorf("cluster %s: deployment %s/%s is missing", cluster, namespace, name)
			case placed && *d.Spec.Replicas != n:
				return fmt.Errorf("cluster %s: want %d replicas, got %d", cluster, n, *d.Spec.Replicas)
			case placed && images[cluster] != "" && d.Spec.Template.Spec.Containers[0].Image != images[cluster]:
				return fmt.Errorf("cluster %s: want image %s, got %s", cluster, images[cluster], d.Spec.Template.Spec.Containers[0].Image)
			}
		}
		return nil
	}
}

const webPolicies = `
resource "flotilla_propagation_policy" "web" {
  name      = "web"
  namespace = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    cluster_affinity = { cluster_names = %s }
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference = { static_weight_list = [
        { target_cluster = { cluster_names = ["east"] }, weight = %d },
        { target_cluster = { cluster_names = ["west"] }, weight = %d },
      ] }
    }
  }
}

resource "flotilla_override_policy" "eu_registry" {
  name      = "eu-registry"
  namespace = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
  override_rules = [{
    target_cluster = { cluster_names = ["west"] }
    overriders = { image_overrider = [{ component = "Registry", operator = "replace", value = "registry.eu.example.com" }] }
  }]
}
`

// webManifestAttrs place the web Deployment with the web policy and the EU
// registry override.
var webManifestAttrs = webAttrs("east", "west") + "\n  override_policies    = [flotilla_override_policy.eu_registry]"

func (m *members) webConfig(eastWeight, westWeight int, image string) string {
	return m.webConfigOn(`["east", "west"]`, eastWeight, westWeight, image)
}

// webConfigOn is webConfig with the cluster names the policy selects.
func (m *members) webConfigOn(clusterNames string, eastWeight, westWeight int, image string) string {
	return m.clusterHCL("east", `region = "us-east"`) + m.clusterHCL("west", `region = "eu-west"`) +
		fmt.Sprintf(webPolicies, clusterNames, eastWeight, westWeight) + webDeployment{replicas: 3, image: image, attrs: webManifestAttrs}.HCL()
}

// TestAccManifestLifecycle is Terraform's contract for flotilla_manifest:
// the plan shows placement and per-cluster objects before apply, apply
// honours it, the next plan is empty, updates move replicas and prune, and
// drift made with kubectl shows in the next plan and is restored.
func TestAccManifestLifecycle(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: m.webConfig(1, 2, "nginx:1.27"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.Int64Exact(1), "west": knownvalue.Int64Exact(2),
					})),
					expectRenderedImage("flotilla_manifest.web", "east", "nginx:1.27"),
					expectRenderedImage("flotilla_manifest.web", "west", "registry.eu.example.com/nginx:1.27"),
					plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("policy"), knownvalue.StringExact("PropagationPolicy shop/web")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("status").AtMapKey("health"), knownvalue.StringExact("Healthy")),
					statecheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("status").AtMapKey("aggregated").AtMapKey("readyReplicas"), knownvalue.Int64Exact(3)),
				},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 1, "west": 2},
					map[string]string{"east": "nginx:1.27", "west": "registry.eu.example.com/nginx:1.27"}),
			},
			{
				// The same configuration again: nothing to do.
				Config:             m.webConfig(1, 2, "nginx:1.27"),
				ConfigPlanChecks:   resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ExpectNonEmptyPlan: false,
			},
			{
				// A new image is an in-place update with per-cluster diffs.
				Config: m.webConfig(1, 2, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionUpdate),
					expectRenderedImage("flotilla_manifest.web", "west", "registry.eu.example.com/nginx:1.28"),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 1, "west": 2},
					map[string]string{"east": "nginx:1.28", "west": "registry.eu.example.com/nginx:1.28"}),
			},
			{
				// New weights move replicas: 2:1 instead of 1:2.
				Config: m.webConfig(2, 1, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.Int64Exact(2), "west": knownvalue.Int64Exact(1),
					})),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 2, "west": 1}, nil),
			},
			{
				// Selecting only west moves every replica there and prunes east.
				Config: m.webConfigOn(`["west"]`, 1, 2, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"west": knownvalue.Int64Exact(3),
					})),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"west": 3}, nil),
			},
			{
				// Drift: kubectl changes the image in west; the plan shows it and apply restores it.
				PreConfig: func() {
					// The deployment controller writes the object too, so retry on a conflict as kubectl edit would.
					err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
						d := m.deployment(t, "west", "shop", "web")
						d.Spec.Template.Spec.Containers[0].Image = "nginx:hacked"
						_, err := m.clients["west"].AppsV1().Deployments("shop").Update(context.Background(), d, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: m.webConfigOn(`["west"]`, 1, 2, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionUpdate),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"west": 3}, map[string]string{"west": "registry.eu.example.com/nginx:1.28"}),
			},
			{
				ResourceName:      "flotilla_manifest.web",
				ImportState:       true,
				ImportStateId:     "apps/v1, Kind=Deployment, shop/web",
				ImportStateVerify: true,
				// Import records the template's identity; the fleet it runs in is passed by value and
				// comes back with the next apply, which adopts the objects flotilla already owns.
				ImportStateVerifyIgnore: []string{"clusters", "connections", "propagation_policies", "override_policies", "placement", "rendered", "policy", "affinity_term", "status", "manifest"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			for cluster := range m.byName {
				if d := m.deployment(t, cluster, "shop", "web"); d != nil {
					return fmt.Errorf("cluster %s: deployment left behind after destroy", cluster)
				}
			}
			return nil
		},
	})
}

// TestAccManifestConflict: an object flotilla does not own is refused
// unless the policy says Overwrite, and then adopted; destroy releases it.
func TestAccManifestConflict(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop"}, Data: map[string]string{"owner": "someone-else"}}
	ctx := context.Background()
	if _, err := m.clients["east"].CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.clients["east"].CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	config := func(resolution string) string {
		return m.clusterHCL("east", "") + fmt.Sprintf(`
resource "flotilla_propagation_policy" "settings" {
  name                = "settings"
  namespace           = "shop"
  conflict_resolution = %q
  resource_selectors  = [{ api_version = "v1", kind = "ConfigMap", name = "settings" }]
}
resource "flotilla_manifest" "settings" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "settings", namespace = "shop" }
    data       = { owner = "flotilla" }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.settings]
}
`, resolution)
	}
	owner := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got, err := m.clients["east"].CoreV1().ConfigMaps("shop").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Data["owner"] != want {
				return fmt.Errorf("owner: want %q, got %q", want, got.Data["owner"])
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config:      config("Abort"),
				ExpectError: wrappedMessage(`ConfigMap shop/settings exists and is not managed by flotilla`),
			},
			{
				Config: config("Overwrite"),
				Check:  owner("flotilla"),
			},
		},
	})
	// flotilla deletes only what it created: an adopted object is released
	// on destroy, its ownership labels removed, not deleted.
	got, err := m.clients["east"].CoreV1().ConfigMaps("shop").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("destroy deleted the adopted ConfigMap instead of releasing it: %v", err)
	}
	if _, owned := got.Labels[render.LabelManagedBy]; owned {
		t.Errorf("destroy left flotilla's ownership on the adopted ConfigMap: labels %v", got.Labels)
	}
}

// TestAccManifestProgressive: a cluster whose connection is only known
// during apply (here from terraform_data, in practice a cluster module's
// output) is planned from its declared facts, and the same apply deploys to it.
func TestAccManifestProgressive(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east")
	c := m.byName["east"]
	config := fmt.Sprintf(`
resource "terraform_data" "endpoint" {
  input = %s
}
resource "flotilla_cluster" "east" {
  name                   = "east"
  region                 = "us-east"
  host                   = terraform_data.endpoint.output
  token                  = %s
  cluster_ca_certificate = %s
}
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
  placement          = { cluster_affinity = { field_selector = { match_expressions = [{ key = "region", operator = "In", values = ["us-east"] }] } } }
}
`, quoteHCL(c.Host), quoteHCL(c.Token), quoteHCL(string(c.CAData))) + webDeployment{replicas: 3, image: "nginx:1.27", attrs: webAttrs("east")}.HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("flotilla_cluster.east", tfjsonpath.New("host")),
				plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
					"east": knownvalue.Int64Exact(3),
				})),
				expectRenderedImage("flotilla_manifest.web", "east", "nginx:1.27"),
			}},
			Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 3}, map[string]string{"east": "nginx:1.27"}),
		}},
	})
}

// TestAccManifestPruneRetried: a prune that failed because the cluster was
// down shows up in the next plan once the cluster answers, even though the
// configuration did not change, and apply then removes the leftover copy.
func TestAccManifestPruneRetried(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	east := m.byName["east"]
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: m.webConfig(1, 2, "nginx:1.27")},
			{
				PreConfig:   east.StopAPIServer,
				Config:      m.webConfigOn(`["west"]`, 1, 2, "nginx:1.27"),
				ExpectError: wrappedMessage("failed in some clusters"),
			},
			{
				PreConfig: func() {
					if err := east.StartAPIServer(context.Background()); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.webConfigOn(`["west"]`, 1, 2, "nginx:1.27"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionUpdate),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"west": 3}, nil),
			},
		},
	})
}
