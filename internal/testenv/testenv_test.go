package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestFullFleet starts three full members once and runs the checks that need
// pods against it, because starting a fleet is the expensive part.
func TestFullFleet(t *testing.T) {
	t.Parallel()
	f := testenv.Start(t, testenv.Options{
		Clusters: 3,
		Node: testenv.NodeSpec{
			CPU:    resource.MustParse("8"),
			Labels: map[string]string{"topology.kubernetes.io/region": "test-1"},
		},
	})
	t.Logf("3 full clusters ready in %s", f.StartupTime)
	if got := len(f.Clusters); got != 3 {
		t.Fatalf("got %d clusters, want 3", got)
	}

	t.Run("nodes carry the requested capacity and labels", func(t *testing.T) {
		for _, c := range f.Clusters {
			nodes, err := c.Clientset(t).CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: list nodes: %v", c.Name, err)
			}
			if len(nodes.Items) != 1 {
				t.Fatalf("%s: got %d nodes, want 1", c.Name, len(nodes.Items))
			}
			n := nodes.Items[0]
			if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("8")) != 0 {
				t.Errorf("%s: node allocatable cpu = %s, want 8", c.Name, cpu.String())
			}
			if mem := n.Status.Allocatable[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("256Gi")) != 0 {
				t.Errorf("%s: node allocatable memory = %s, want the default 256Gi", c.Name, mem.String())
			}
			if got := n.Labels["topology.kubernetes.io/region"]; got != "test-1" {
				t.Errorf("%s: node region label = %q, want test-1", c.Name, got)
			}
		}
	})

	t.Run("deployments roll out in every member", func(t *testing.T) {
		begin := time.Now()
		var wg sync.WaitGroup
		for _, c := range f.Clusters {
			wg.Go(func() {
				client := c.Clientset(t)
				if _, err := client.AppsV1().Deployments("default").Create(t.Context(), deployment("web", 3), metav1.CreateOptions{}); err != nil {
					t.Errorf("%s: create deployment: %v", c.Name, err)
					return
				}
				if err := waitReady(t.Context(), client, "web", 3); err != nil {
					t.Errorf("%s: %v", c.Name, err)
				}
			})
		}
		wg.Wait()
		t.Logf("deployments ready in all members %s after the create", time.Since(begin).Round(time.Millisecond))
	})

	t.Run("pods of a broken image never become ready; fixing the image rolls out", func(t *testing.T) {
		client := f.Cluster("member3").Clientset(t)
		d := deployment("bad", 2)
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:" + testenv.BrokenImageTag
		if _, err := client.AppsV1().Deployments("default").Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// kwok has handled a pod once it has an IP; a broken one stays not Ready.
		var pods *corev1.PodList
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			pods, err = client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=bad"})
			if err != nil || len(pods.Items) != 2 {
				return false, nil //nolint:nilerr // keep polling until both pods exist
			}
			for _, p := range pods.Items {
				if p.Status.PodIP == "" {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("broken pods were not handled by kwok: %v (%+v)", err, pods)
		}
		time.Sleep(2 * time.Second) // a pod that were to turn Ready late would have by now
		pods, err = client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=bad"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					t.Errorf("pod %s of a broken image is Ready", p.Name)
				}
			}
			if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
				p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
				t.Errorf("pod %s: container statuses %+v, want one waiting in ImagePullBackOff", p.Name, p.Status.ContainerStatuses)
			}
		}
		got, err := client.AppsV1().Deployments("default").Get(t.Context(), "bad", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.ReadyReplicas != 0 {
			t.Errorf("deployment of a broken image has %d ready replicas, want 0", got.Status.ReadyReplicas)
		}
		patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"bad","image":"registry.example/web:2"}]}}}}`)
		if _, err := client.AppsV1().Deployments("default").Patch(t.Context(), "bad", "application/strategic-merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := waitReady(t.Context(), client, "bad", 2); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("member kubeconfig files and the fleet kubeconfig work", func(t *testing.T) {
		for _, c := range f.Clusters {
			cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
			if err != nil {
				t.Fatalf("%s: load %s: %v", c.Name, c.KubeconfigPath, err)
			}
			if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
				t.Errorf("%s: via %s: %v", c.Name, c.KubeconfigPath, err)
			}
		}
		path := t.TempDir() + "/kubeconfig"
		if err := f.WriteKubeconfig(path); err != nil {
			t.Fatal(err)
		}
		raw, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if raw.CurrentContext != "member1" || len(raw.Contexts) != 3 {
			t.Fatalf("fleet kubeconfig: current context %q and %d contexts, want member1 and 3", raw.CurrentContext, len(raw.Contexts))
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, "member2", nil, nil).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if want := f.Cluster("member2").Host; cfg.Host != want {
			t.Errorf("context member2 points at %s, want %s", cfg.Host, want)
		}
	})

	t.Run("a restarted apiserver keeps its data and its controllers", func(t *testing.T) {
		c := f.Cluster("member2")
		client := c.Clientset(t)
		c.StopAPIServer()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		cancel()
		if err == nil {
			t.Fatal("member2 answered while its apiserver was stopped")
		}
		begin := time.Now()
		if err := c.StartAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Logf("apiserver restarted in %s", time.Since(begin).Round(time.Millisecond))
		// Same client, same port and credentials: the Deployment is still there,
		// and scaling it proves kcm, the scheduler and kwok reconnected.
		patch := []byte(`{"spec":{"replicas":4}}`)
		if _, err := client.AppsV1().Deployments("default").Patch(t.Context(), "web", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("scale deployment after restart: %v", err)
		}
		if err := waitReady(t.Context(), client, "web", 4); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAPIServerOnly(t *testing.T) {
	t.Parallel()
	f := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly, NamePrefix: "hub"})
	t.Logf("2 apiserver-only clusters ready in %s", f.StartupTime)
	for i, c := range f.Clusters {
		if want := []string{"hub1", "hub2"}[i]; c.Name != want {
			t.Errorf("cluster %d is named %s, want %s", i, c.Name, want)
		}
		client := c.Clientset(t)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}, Data: map[string]string{"k": c.Name}}
		if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: create configmap: %v", c.Name, err)
		}
		nodes, err := client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 0 {
			t.Errorf("%s: apiserver-only cluster has %d nodes, want none", c.Name, len(nodes.Items))
		}
		// Without kube-controller-manager nobody makes the default ServiceAccount.
		if _, err := client.CoreV1().ServiceAccounts("default").Get(t.Context(), "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: default ServiceAccount: got err %v, want NotFound", c.Name, err)
		}
	}
	// Each cluster has its own etcd prefix: hub2 must not see hub1's ConfigMap.
	got, err := f.Cluster("hub2").Clientset(t).CoreV1().ConfigMaps("default").Get(t.Context(), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["k"] != "hub2" {
		t.Errorf("hub2 reads configmap data %v, want its own", got.Data)
	}
	if err := f.Cluster("hub1").AddNode(t.Context(), "n", testenv.NodeSpec{}); err == nil {
		t.Error("AddNode succeeded on an apiserver-only cluster")
	}
}

func TestMissingBinariesNameMakeTestenv(t *testing.T) {
	_, err := testenv.StartFleet(t.Context(), testenv.Options{BinDir: t.TempDir()})
	if !errors.Is(err, testenv.ErrBinariesMissing) || !strings.Contains(err.Error(), "make testenv") {
		t.Fatalf("got %v, want ErrBinariesMissing naming `make testenv`", err)
	}
}

func TestProcessInfoRunningMatchesCommandLine(t *testing.T) {
	self := testenv.ProcessInfo{Name: "test", PID: os.Getpid(), Cmdline: os.Args}
	if !self.Running() {
		t.Fatal("the test binary does not match its own command line")
	}
	// A PID whose command line differs (a reused PID) is never signalled.
	other := self
	other.Cmdline = []string{"/not/the/binary"}
	if other.Running() {
		t.Fatal("a different command line matched")
	}
	if err := testenv.StopDetached([]testenv.ProcessInfo{other}, time.Second); err != nil {
		t.Fatal(err)
	}
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  name,
					Image: "registry.example/web:1",
				}}},
			},
		},
	}
}

func waitReady(ctx context.Context, client kubernetes.Interface, name string, replicas int32) error {
	var last *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // the apiserver may be coming back; keep polling
		}
		last = d
		return d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == replicas, nil
	})
	switch {
	case err != nil && last != nil:
		return fmt.Errorf("deployment %s: want %d ready replicas: %w; status %+v", name, replicas, err, last.Status)
	case err != nil:
		return fmt.Errorf("deployment %s: %w", name, err)
	}
	return nil
}
