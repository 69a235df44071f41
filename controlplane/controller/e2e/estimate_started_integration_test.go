package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestPerNodeEstimateStartsEveryReplica checks the per-node estimate
// against what really starts, on two Full members (kwok nodes, the real
// kube-scheduler and kube-controller-manager):
//
//   - frag: four nodes of 1.5 cores. Summed, 6 cores are free, so the
//     general estimate has room for 6 one-core replicas; node by node
//     there is room for 4.
//   - whole: its four 1.5-core nodes cordoned and one node of 4 cores
//     added: room for 4 either way.
//
// Eight one-core replicas divided by dynamic weights: by the general
// estimate frag would get 5 of them (6:4) and one would stay Pending
// there; by the nodes both get 4, and kube-scheduler binds every pod.
func TestPerNodeEstimateStartsEveryReplica(t *testing.T) {
	t.Parallel()
	start := time.Now()
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	members := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.Full,
		Node: testenv.NodeSpec{Count: 4, CPU: resource.MustParse("1500m")}}).Clusters
	hub := controllertest.SystemHost(t, host)
	for _, m := range members {
		controllertest.RegisterMember(t, hub, m)
	}
	clients, names := controllertest.MemberClients(t, members, controllertest.Scheme(t))
	frag, whole := names[0], names[1]
	var nodes corev1.NodeList
	if err := clients[whole].List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		testkit.MustUpdate(t, clients[whole], client.ObjectKeyFromObject(n), n, func() { n.Spec.Unschedulable = true })
	}
	if err := members[1].AddNode(t.Context(), whole+"-big", testenv.NodeSpec{CPU: resource.MustParse("4")}); err != nil {
		t.Fatal(err)
	}
	f := controllertest.Fleet{Host: host, Hub: hub, Clusters: members, Names: names, Scheme: controllertest.Scheme(t)}
	f.StartControlPlane(t)
	// The first decision must see both members as they are now.
	waitAllocatableCPU(t, hub, frag, "6")
	waitAllocatableCPU(t, hub, whole, "4")

	controllertest.CreatePolicy(t, hub, apitest.MakePropagationPolicy("web", "default").
		SelectName("apps/v1", "Deployment", "web").ClusterNames(frag, whole).DynamicWeight())
	testkit.MustCreate(t, hub, oneCoreDeployment("web", 8, func(*corev1.PodSpec) {}))

	t.Log("frag's nodes hold 4 of the 8 (its summed free cores would say 6): 4 and 4")
	waitPlacement(t, hub, "web", map[string]int32{frag: 4, whole: 4})
	t.Log("kube-scheduler binds every replica in both members; none is left Pending")
	for _, name := range names {
		c := clients[name]
		testkit.Eventually(t, controllertest.Deadline, "4 pods of web running in "+name+", none pending", func() (bool, string) {
			var pods corev1.PodList
			if err := c.List(t.Context(), &pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
				return false, err.Error()
			}
			phases := map[corev1.PodPhase]int{}
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil {
					phases[p.Status.Phase]++
				}
			}
			return phases[corev1.PodRunning] == 4 && len(phases) == 1, fmt.Sprint(phases)
		})
	}
	t.Logf("TestPerNodeEstimateStartsEveryReplica: %v", time.Since(start).Round(10*time.Millisecond))
}

// waitAllocatableCPU waits until the Cluster's resource summary counts cpu
// allocatable on its Ready, schedulable nodes.
func waitAllocatableCPU(t *testing.T, hub client.Client, name, cpu string) {
	t.Helper()
	want := resource.MustParse(cpu)
	testkit.Eventually(t, controllertest.Deadline, "cluster "+name+" summarized with "+cpu+" cores", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: name}, &cl); err != nil {
			return false, err.Error()
		}
		s := cl.Status.ResourceSummary
		if s == nil {
			return false, "no resource summary"
		}
		got := s.Allocatable[corev1.ResourceCPU]
		return got.Cmp(want) == 0, "allocatable cpu " + got.String()
	})
}
