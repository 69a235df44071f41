package member

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

var ignoreTransitionTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func testStatus(t *testing.T, m *testenv.Cluster) {
	c := mustGet(t, m.Name, tokenConn(m))
	before, err := CollectStatus(t.Context(), c)
	if err != nil {
		t.Fatalf("CollectStatus: %v", err)
	}

	wantConditions := []metav1.Condition{
		{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: api.ReasonClusterReady, Message: "cluster is healthy and ready to accept workloads"},
		{Type: api.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue, Reason: api.ReasonAPIEnablementsComplete, Message: "collected complete API enablements from the cluster"},
	}
	if diff := cmp.Diff(wantConditions, before.Conditions, ignoreTransitionTime); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	for _, cond := range before.Conditions {
		if cond.LastTransitionTime.IsZero() {
			t.Errorf("condition %s has no LastTransitionTime, which the API requires", cond.Type)
		}
	}
	if before.KubernetesVersion != "v1.35.4" {
		t.Errorf("KubernetesVersion = %q, want v1.35.4", before.KubernetesVersion)
	}
	if diff := cmp.Diff(&api.NodeSummary{TotalNum: 1, ReadyNum: 1}, before.NodeSummary); diff != "" {
		t.Errorf("node summary (-want +got):\n%s", diff)
	}
	if got := before.ResourceSummary.Allocatable[corev1.ResourceCPU]; got.Cmp(resource.MustParse(nodeCPU)) != 0 {
		t.Errorf("allocatable cpu = %s, want the node's %s", got.String(), nodeCPU)
	}

	t.Run("API enablements", func(t *testing.T) {
		enabled := func(gv, name, kind string) bool {
			i := slices.IndexFunc(before.APIEnablements, func(e api.APIEnablement) bool { return e.GroupVersion == gv })
			return i >= 0 && slices.Contains(before.APIEnablements[i].Resources, api.APIResource{Name: name, Kind: kind})
		}
		for _, r := range [][3]string{{"apps/v1", "deployments", "Deployment"}, {"v1", "configmaps", "ConfigMap"}, {"batch/v1", "cronjobs", "CronJob"}} {
			if !enabled(r[0], r[1], r[2]) {
				t.Errorf("%s %s is not enabled", r[0], r[2])
			}
		}
		if enabled("apps/v1", "deployments/scale", "Scale") {
			t.Errorf("subresource deployments/scale is listed")
		}
		if enabled("authorization.k8s.io/v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview") {
			t.Errorf("create-only selfsubjectaccessreviews is listed, though it cannot be listed")
		}
		sorted := slices.IsSortedFunc(before.APIEnablements, func(a, b api.APIEnablement) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
		for _, e := range before.APIEnablements {
			sorted = sorted && slices.IsSortedFunc(e.Resources, func(a, b api.APIResource) int { return strings.Compare(a.Name, b.Name) })
		}
		if !sorted {
			t.Errorf("API enablements are not sorted")
		}
	})

	t.Run("allocated grows with a scheduled pod, allocating with a pending one", func(t *testing.T) {
		ns := createNamespace(t, c, "status")
		scheduled := requestingPod("scheduled", "500m", "64Mi", nil)
		pending := requestingPod("pending", "250m", "32Mi", map[string]string{"flotilla.io/no-such-node": "true"})
		for _, p := range []*corev1.Pod{scheduled, pending} {
			if _, err := c.Kubernetes.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create pod %s: %v", p.Name, err)
			}
		}
		waitPod(t, c, ns, "scheduled", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
		waitPod(t, c, ns, "pending", func(p *corev1.Pod) bool {
			cond := podCondition(p, corev1.PodScheduled)
			return cond != nil && cond.Status == corev1.ConditionFalse
		})

		after, err := CollectStatus(t.Context(), c)
		if err != nil {
			t.Fatalf("CollectStatus: %v", err)
		}
		grew := func(list func(*api.ResourceSummary) corev1.ResourceList) corev1.ResourceList {
			out := corev1.ResourceList{}
			for name, q := range list(after.ResourceSummary) {
				q.Sub(list(before.ResourceSummary)[name])
				out[name] = q
			}
			return out
		}
		if diff := cmp.Diff(resourceList("500m", "64Mi", "1"), grew(func(s *api.ResourceSummary) corev1.ResourceList { return s.Allocated }), quantities); diff != "" {
			t.Errorf("allocated growth (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(resourceList("250m", "32Mi", "1"), grew(func(s *api.ResourceSummary) corev1.ResourceList { return s.Allocating }), quantities); diff != "" {
			t.Errorf("allocating growth (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before.ResourceSummary.Allocatable, after.ResourceSummary.Allocatable, quantities); diff != "" {
			t.Errorf("allocatable changed (-before +after):\n%s", diff)
		}
	})
}

// createNamespace makes a namespace for one test and deletes it afterwards.
func createNamespace(t *testing.T, c *Client, prefix string) string {
	t.Helper()
	ns, err := c.Kubernetes.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Kubernetes.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

func requestingPod(name, cpu, memory string, nodeSelector map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			NodeSelector:                 nodeSelector,
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/app:1",
				Resources: corev1.ResourceRequirements{Requests: resourceList(cpu, memory, "")},
			}},
		},
	}
}

func waitPod(t *testing.T, c *Client, ns, name string, done func(*corev1.Pod) bool) {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Kubernetes.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: %v; last status %+v", ns, name, err, last.Status)
	}
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
