package engine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestPlanPerNode plans over two apiserver-only members whose Nodes and
// bound Pods the test writes (the plan reads only what the apiserver
// stores): frag's four 4-core nodes have 1.75, 1.75, 1.75 and 0.75 cores
// free, room for 6 one-core replicas by the summary but 3 by its nodes;
// roomy has one node with 3 free. Six replicas by dynamic weight follow
// the nodes, 3 and 3, with Fleet.PerNode, and the summary, 4 and 2,
// without it.
func TestPlanPerNode(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	frag, roomy := env.Clusters[0], env.Clusters[1]
	cs := frag.Clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, used := range []string{"2250m", "2250m", "2250m", "3250m"} {
		name := fmt.Sprintf("frag-%d", i)
		readyNode(t, cs, name, "4")
		if _, err := cs.CoreV1().Pods("default").Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "filler-" + name},
			Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(used)}}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readyNode(t, roomy.Clientset(t), "roomy-0", "3")

	var members []Member
	for _, c := range env.Clusters {
		conn := member.Connection{Host: c.Host, Token: c.Token, ClusterCACertificate: c.CAData}
		members = append(members, Member{Cluster: *apitest.MakeCluster(c.Name).Obj(), Connection: &conn})
	}
	e, err := New(Options{Fleet: "test"})
	if err != nil {
		t.Fatal(err)
	}
	web := apitest.MakeDeployment("web", "default").Replicas(6).
		Set([]any{map[string]any{"name": "app", "image": "busybox", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}},
			"spec", "template", "spec", "containers").Obj()
	fleet := Fleet{Members: members, PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
		SelectName("apps/v1", "Deployment", "web").DynamicWeight().Obj()}}
	for _, c := range []struct {
		perNode bool
		want    map[string]int32
	}{
		{true, map[string]int32{frag.Name: 3, roomy.Name: 3}},
		// Without PerNode, the general estimate.
		{false, map[string]int32{frag.Name: 4, roomy.Name: 2}},
	} {
		fleet.PerNode = c.perNode
		results, reasons := e.Plan(t.Context(), fleet, []*unstructured.Unstructured{web}, nil)
		if len(reasons) > 0 || results[0].Err != nil {
			t.Fatalf("plan: %v %v", reasons, results[0].Err)
		}
		if got := placement(results[0]); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("PerNode %t: placement %v, want %v (frag's nodes hold 3 one-core replicas, its summed free cores 6)", c.perNode, got, c.want)
		}
		var limits []string
		for _, l := range results[0].NodeLimited {
			limits = append(limits, l.Cluster+": "+l.String())
		}
		want := []string{frag.Name + ": per-node fit: room for 3; cluster-wide free would allow 6"}
		if !c.perNode {
			want = nil
		}
		if fmt.Sprint(limits) != fmt.Sprint(want) {
			t.Errorf("PerNode %t: node limits %q, want %q", c.perNode, limits, want)
		}
	}
}

// TestPlanPerNodeRecorded plans over TestPlanPerNode's members from
// recorded status, as a Terraform plan after refresh does: Fits records the
// room frag's nodes have for the template (3), a plan from that recording
// reads the recorded figure, not the nodes (a recording of 5 shows 5), and
// a requirement the recording lacks is estimated from the nodes as they
// stand (3).
func TestPlanPerNodeRecorded(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	frag := env.Clusters[0]
	cs := frag.Clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, used := range []string{"2250m", "2250m", "2250m", "3250m"} {
		name := fmt.Sprintf("frag-%d", i)
		readyNode(t, cs, name, "4")
		if _, err := cs.CoreV1().Pods("default").Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "filler-" + name},
			Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(used)}}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	conn := member.Connection{Host: frag.Host, Token: frag.Token, ClusterCACertificate: frag.CAData}
	live := []Member{{Cluster: *apitest.MakeCluster(frag.Name).Obj(), Connection: &conn}}
	e, err := New(Options{Fleet: "test"})
	if err != nil {
		t.Fatal(err)
	}
	web := apitest.MakeDeployment("web", "default").Replicas(3).
		Set([]any{map[string]any{"name": "app", "image": "busybox", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}},
			"spec", "template", "spec", "containers").Obj()
	cm := apitest.MakeConfigMap("cfg", "default").Obj()
	templates := []*unstructured.Unstructured{web, cm}

	clusters, reasons := e.Snapshot(t.Context(), live)
	fits := e.Fits(live, nil, templates)
	if len(fits[frag.Name]) != 1 {
		t.Fatalf("fits %v: want one requirement (the Deployment's; the ConfigMap has none) for %s", fits, frag.Name)
	}
	var key string
	for k, n := range fits[frag.Name] {
		key = k
		if n != 3 {
			t.Errorf("recorded fit %d, want 3 (frag's nodes hold 3 one-core replicas)", n)
		}
	}
	status := Recorded(clusters, reasons)[frag.Name]
	fleet := Fleet{PerNode: true, PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
		SelectName("apps/v1", "Deployment", "web").DynamicWeight().Obj()}}
	for _, c := range []struct {
		name string
		fits map[string]int32
		want string
	}{
		{"recorded figure", map[string]int32{key: 5}, "per-node fit: room for 5; cluster-wide free would allow 6"},
		{"requirement not recorded", map[string]int32{"0123456789abcdef": 1}, "per-node fit: room for 3; cluster-wide free would allow 6"},
	} {
		recorded := status
		recorded.Fits = c.fits
		fleet.Members = []Member{{Cluster: live[0].Cluster, Connection: &conn, Recorded: &recorded}}
		e.ForgetStatus()
		results, _ := e.Plan(t.Context(), fleet, []*unstructured.Unstructured{web}, nil)
		if results[0].Err != nil {
			t.Fatalf("%s: plan: %v", c.name, results[0].Err)
		}
		var got []string
		for _, l := range results[0].NodeLimited {
			got = append(got, l.String())
		}
		if fmt.Sprint(got) != fmt.Sprint([]string{c.want}) {
			t.Errorf("%s: node limits %q, want %q", c.name, got, c.want)
		}
	}
}

// readyNode creates a Ready, untainted node with cpu cores, 8Gi and 110 pod
// slots. The apiserver taints a new node not-ready; with no
// kube-controller-manager to lift it, the test does.
func readyNode(t *testing.T, cs kubernetes.Interface, name, cpu string) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.Spec.Taints = nil
	if _, err := cs.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
