package e2e_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestPerNodeEstimate runs the control plane over two apiserver-only
// members whose Node objects and bound Pods the test writes (no kubelet,
// no kube-scheduler: the estimate reads only what the apiserver stores):
//
//   - frag: four nodes of 4 cores. One has 0.75 cores free; the other
//     three have 3.25 cores free but one free pod slot each (2 slots, one
//     pod bound). Its resourceModels grade cpu at 0, 1 and 2 cores, so the
//     general estimator (Karmada's: two replicas per 2-core model node)
//     has room for 6 one-core replicas, the nodes for 3.
//   - mixed: a 32-core node tainted dedicated=gpu:NoSchedule and a 3-core
//     node labelled disk=ssd, graded by Karmada's default models.
//
// It checks the modelings the cluster status controller computes from the
// nodes, then that dynamic division and Aggregated follow what the nodes
// hold: fragmentation, a node selector and a taint (tolerated or not).
func TestPerNodeEstimate(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := controllertest.StartFleet(t, 2)
	frag, mixed := f.Names[0], f.Names[1]
	f.StartControlPlane(t)

	var cl clusterv1.Cluster
	testkit.MustUpdate(t, f.Hub, client.ObjectKey{Name: frag}, &cl, func() {
		cpu := func(grade uint, lo, hi string) api.ResourceModel {
			return api.ResourceModel{Grade: grade, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse(lo), Max: resource.MustParse(hi)}}}
		}
		cl.Spec.ResourceModels = []api.ResourceModel{cpu(0, "0", "1"), cpu(1, "1", "2"), cpu(2, "2", "128")}
	})
	// No controller manager runs to create the ServiceAccount pods need.
	testkit.MustCreate(t, f.Members[frag], &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "default"}})
	for i, used := range []string{"3250m", "750m", "750m", "750m"} {
		name, pods := fmt.Sprintf("frag-%d", i), "2"
		if i == 0 {
			pods = "110"
		}
		writeNode(t, f.Members[frag], name, "4", "8Gi", pods, nil, nil)
		writePod(t, f.Members[frag], name, used)
	}
	writeNode(t, f.Members[mixed], "big", "32", "256Gi", "110", nil, []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}})
	writeNode(t, f.Members[mixed], "ssd", "3", "8Gi", "110", map[string]string{"disk": "ssd"}, nil)

	t.Log("modelings: frag by its cpu models, mixed by Karmada's default ones")
	waitModelings(t, f.Hub, frag, []api.AllocatableModeling{{Grade: 0, Count: 1}, {Grade: 1}, {Grade: 2, Count: 3}})
	waitModelings(t, f.Hub, mixed, []api.AllocatableModeling{{Grade: 0}, {Grade: 1, Count: 1}, {Grade: 2}, {Grade: 3}, {Grade: 4}, {Grade: 5}, {Grade: 6, Count: 1}, {Grade: 7}, {Grade: 8}})

	policy := func(name string) *apitest.PropagationPolicyWrapper {
		return apitest.MakePropagationPolicy(name, "default").SelectName("apps/v1", "Deployment", name).ClusterNames(frag, mixed)
	}
	controllertest.CreatePolicy(t, f.Hub, policy("web").DynamicWeight())
	controllertest.CreatePolicy(t, f.Hub, policy("ssd").DynamicWeight())
	controllertest.CreatePolicy(t, f.Hub, policy("gpu").Divided(api.ReplicaDivisionPreferenceAggregated))
	testkit.MustCreate(t, f.Hub, oneCoreDeployment("web", 6, func(*corev1.PodSpec) {}))
	testkit.MustCreate(t, f.Hub, oneCoreDeployment("ssd", 3, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"disk": "ssd"} }))
	testkit.MustCreate(t, f.Hub, oneCoreDeployment("gpu", 20, func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}))

	t.Log("pod slots per node: frag's models say 6, its nodes 3; mixed's untolerated big node holds none: 3 and 3")
	waitPlacement(t, f.Hub, "web", map[string]int32{frag: 3, mixed: 3})
	t.Log("node selector disk=ssd: only mixed's ssd node, which holds 3")
	waitPlacement(t, f.Hub, "ssd", map[string]int32{mixed: 3})
	t.Log("tolerated taint: mixed's big node counts, so Aggregated packs 20 into mixed")
	waitPlacement(t, f.Hub, "gpu", map[string]int32{mixed: 20})
	t.Logf("TestPerNodeEstimate: %v", time.Since(start).Round(10*time.Millisecond))
}

// writeNode creates a Ready node with cpu, memory and pods allocatable.
func writeNode(t *testing.T, c client.Client, name, cpu, memory, pods string, labels map[string]string, taints []corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	testkit.MustCreate(t, c, n)
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse(pods)}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	if err := c.Status().Update(t.Context(), n); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
	// The apiserver's TaintNodesByCondition admission taints a new node
	// not-ready; kube-controller-manager, which these members do not run,
	// would lift it once the node is Ready. The estimator, like
	// kube-scheduler, counts no node with an untolerated NoSchedule taint.
	testkit.MustUpdate(t, c, client.ObjectKey{Name: name}, n, func() { n.Spec.Taints = taints })
}

// writePod creates a pod bound to node requesting cpu and 1Gi.
func writePod(t *testing.T, c client.Client, node, cpu string) {
	t.Helper()
	testkit.MustCreate(t, c, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "filler-" + node},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
	})
}

func oneCoreDeployment(name string, replicas int32, edit func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			},
		},
	}
	edit(&d.Spec.Template.Spec)
	return d
}

func waitModelings(t *testing.T, hub client.Client, cluster string, want []api.AllocatableModeling) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "allocatable modelings of "+cluster, func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: cluster}, &cl); err != nil {
			return false, err.Error()
		}
		var got []api.AllocatableModeling
		if s := cl.Status.ResourceSummary; s != nil {
			got = s.AllocatableModelings
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("got %v, want %v", got, want)
	})
}

// waitPlacement waits until Deployment name's binding places exactly want.
func waitPlacement(t *testing.T, hub client.Client, name string, want map[string]int32) {
	t.Helper()
	key := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name)}
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%s placed %v", name, want), func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		got := map[string]int32{}
		for _, c := range rb.Spec.Clusters {
			got[c.Name] = c.Replicas
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("got %v, conditions %v", got, rb.Status.Conditions)
	})
}
