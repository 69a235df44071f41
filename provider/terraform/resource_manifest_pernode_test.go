package terraform

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestAccManifestPerNode plans flotilla_manifest over a fragmented member:
// frag's four 4-core nodes have 1.75, 1.75, 1.75 and 0.75 cores free (the
// test writes its Nodes and bound Pods; no kubelet runs), room for 6
// one-core replicas by its summed free cores but 3 by its nodes; roomy has
// one 4-core node. The plan divides by what the nodes hold, apply applies
// exactly that, and the plan after each apply is empty (checked by the
// test framework after every step).
//
//   - 6 replicas, a new manifest (members read live): frag 3, roomy 3; the
//     general estimate would give frag 4, roomy 2.
//   - 7 replicas, planned from the status refresh recorded (with the
//     per-node room for the template's requirements): the one more goes to
//     roomy (room 4 against frag's 3); the general estimate picks frag (6).
//   - 8 replicas with a nodeSelector only roomy-0 matches, a requirement
//     refresh did not record (the members' nodes are read for it): the one
//     more goes to roomy, as frag's nodes admit none.
func TestAccManifestPerNode(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	frag, roomy := env.Clusters[0], env.Clusters[1]
	cs := frag.Clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, used := range []string{"2250m", "2250m", "2250m", "3250m"} {
		name := fmt.Sprintf("frag-%d", i)
		createReadyNode(t, cs, name, "4", nil)
		if _, err := cs.CoreV1().Pods("default").Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "filler-" + name},
			Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(used)}}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createReadyNode(t, roomy.Clientset(t), "roomy-0", "4", map[string]string{"pool": "roomy"})
	members := &members{byName: map[string]*testenv.Cluster{"frag": frag, "roomy": roomy},
		clients: map[string]kubernetes.Interface{"frag": cs, "roomy": roomy.Clientset(t)}}

	config := func(replicas int, nodeSelector string) string {
		return members.clusterHCL("frag", "") + members.clusterHCL("roomy", "") + `
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    cluster_affinity = { cluster_names = ["frag", "roomy"] }
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference           = { dynamic_weight = "AvailableReplicas" }
    }
  }
}
` + fmt.Sprintf(`
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "default" }
    spec = {
      replicas = %d
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec = {
          %s
          containers   = [{ name = "web", image = "nginx:1.27", resources = { requests = { cpu = "1" } } }]
        }
      }
    }
  }
  clusters             = [flotilla_cluster.frag, flotilla_cluster.roomy]
  propagation_policies = [flotilla_propagation_policy.web]
  wait_for_rollout     = false
}
`, replicas, nodeSelector)
	}
	placed := func(fragN, roomyN int64) []plancheck.PlanCheck {
		return []plancheck.PlanCheck{plancheck.ExpectKnownValue("flotilla_manifest.web", tfjsonpath.New("placement"),
			knownvalue.MapExact(map[string]knownvalue.Check{"frag": knownvalue.Int64Exact(fragN), "roomy": knownvalue.Int64Exact(roomyN)}))}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config:           config(6, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: placed(3, 3)},
				Check:            members.checkReplicas(t, "default", "web", map[string]int32{"frag": 3, "roomy": 3}, nil),
			},
			{
				Config:           config(7, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: placed(3, 4)},
				Check:            members.checkReplicas(t, "default", "web", map[string]int32{"frag": 3, "roomy": 4}, nil),
			},
			{
				Config:           config(8, `nodeSelector = { pool = "roomy" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: placed(3, 5)},
				Check:            members.checkReplicas(t, "default", "web", map[string]int32{"frag": 3, "roomy": 5}, nil),
			},
		},
	})
}

// createReadyNode creates a Ready, untainted node with cpu cores, 8Gi and
// 110 pod slots. The apiserver taints a new node not-ready; with no
// kube-controller-manager to lift it, the test does.
func createReadyNode(t *testing.T, cs kubernetes.Interface, name, cpu string, labels map[string]string) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(cpu), corev1.ResourceMemory: apiresource.MustParse("8Gi"), corev1.ResourcePods: apiresource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.Spec.Taints = nil
	if _, err := cs.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
