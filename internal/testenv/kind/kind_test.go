package kind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// TestCreateDelete makes a host and a member as kind clusters where Docker
// runs: each is reached through the token kubeconfig Create wrote (the shape
// testenv writes), the member's node carries its label, the member turns a
// Deployment into a ReplicaSet and the host does not; Delete removes both.
func TestCreateDelete(t *testing.T) {
	if err := Docker(t.Context()); err != nil {
		t.Skipf("no kind clusters here: %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(wd))
	prefix := "flotilla-test-" + hex.EncodeToString(sum[:3]) + "-"
	f := &Fleet{Dir: t.TempDir(), Logf: t.Logf}
	specs := []Spec{
		{Name: "host", Prefix: prefix, Role: Host},
		{Name: "member1", Prefix: prefix, Labels: map[string]string{"topology.kubernetes.io/zone": "east"}},
	}
	names := []string{specs[0].ClusterName(), specs[1].ClusterName()}
	// A test killed before its cleanup leaves its clusters; they are this
	// checkout's, by prefix, so the next run removes them.
	if err := f.Delete(names); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	var recorded []string
	clusters, err := f.Up(t.Context(), specs, func(n []string) error { recorded = n; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recorded, names) {
		t.Fatalf("Up recorded %q, want %q", recorded, names)
	}
	t.Logf("two kind clusters in %s", time.Since(begin).Round(time.Second))
	t.Cleanup(func() {
		if err := f.Delete(names); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
	if err := f.Free(specs); err == nil {
		t.Fatal("Free accepts clusters that exist")
	}
	host, member := clientFor(t, clusters[0].KubeconfigPath), clientFor(t, clusters[1].KubeconfigPath)

	node, err := member.CoreV1().Nodes().Get(t.Context(), names[1]+nodeSuffix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Labels["topology.kubernetes.io/zone"]; got != "east" {
		t.Errorf("member node label topology.kubernetes.io/zone = %q, want east", got)
	}
	for _, c := range []kubernetes.Interface{host, member} {
		if _, err := c.AppsV1().Deployments("default").Create(t.Context(), deployment(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for replicaSets(t, member) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the member made no ReplicaSet of web in a minute: its controllers do not run")
		case <-time.After(time.Second):
		}
	}
	// The member's ReplicaSet came; by now the host's would have too.
	time.Sleep(5 * time.Second)
	if n := replicaSets(t, host); n != 0 {
		t.Errorf("the host made %d ReplicaSet(s) of a template: its deployment controller runs", n)
	}

	if err := f.Delete(names); err != nil {
		t.Fatal(err)
	}
	existing, err := f.Existing()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if slices.Contains(existing, n) {
			t.Errorf("kind cluster %s still exists after Delete", n)
		}
	}
}

func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo].Token == "" || len(cfg.Clusters[ctx.Cluster].CertificateAuthorityData) == 0 {
		t.Fatalf("%s: want a current context with a token user and an embedded CA, got %+v", kubeconfig, ctx)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

func replicaSets(t *testing.T, c kubernetes.Interface) int {
	t.Helper()
	list, err := c.AppsV1().ReplicaSets("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}
