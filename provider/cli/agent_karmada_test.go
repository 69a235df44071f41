package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/work"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAgentAPIGroupsFlag: agent and register refuse an unknown
// --api-groups with the controlplane command's message, and the agent
// chooses the process' groups from the flag before it builds anything
// (here it then refuses its lease timing, so it never connects).
func TestAgentAPIGroupsFlag(t *testing.T) {
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
	want := `--api-groups: unknown API groups "karmda": want "flotilla" or "karmada"`
	var stderr bytes.Buffer
	if code := Agent([]string{"--hub-kubeconfig", "hub", "--cluster-name", "edge", "--api-groups", "karmda"}, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("agent --api-groups=karmda: exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	stderr.Reset()
	if code := Register([]string{"--hub-kubeconfig", "hub", "--cluster-name", "edge", "--out", "x", "--api-groups", "karmda"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("register --api-groups=karmda: exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	stderr.Reset()
	Agent([]string{"--hub-kubeconfig", "hub", "--cluster-name", "edge", "--api-groups=karmada", "--cluster-lease-duration", "10s", "--cluster-lease-renew-interval", "10s"}, &stderr)
	if g := apis.Current(); g != apis.KarmadaGroups {
		t.Errorf("after agent --api-groups=karmada the process speaks %q, want %q", g, apis.KarmadaGroups)
	}
}

// TestAgentKarmadaGroups joins a pull member to a Karmada-mode hub:
// register --api-groups=karmada makes a cluster.karmada.io Cluster, the
// execution namespace karmada-es-<cluster> and the agent's rights there;
// the agent, with only that identity, reports the Cluster's status in
// cluster.karmada.io and applies the work.karmada.io Work the Karmada-mode
// control plane makes from a policy.karmada.io PropagationPolicy.
func TestAgentKarmadaGroups(t *testing.T) {
	start := time.Now()
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "hub"}).Clusters[0]
	edge := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "edge"}).Clusters[0]
	t.Logf("fleet up in %v", time.Since(start).Round(10*time.Millisecond))
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })

	hubKubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
	var stdout, stderr bytes.Buffer
	if code := Register([]string{"--hub-kubeconfig", host.KubeconfigPath, "--cluster-name", edge.Name, "--out", hubKubeconfig, "--api-groups=karmada"}, &stdout, &stderr); code != 0 {
		t.Fatalf("register --api-groups=karmada exited %d: %s", code, stderr.String())
	}
	hub := plainClient(t, host.RESTConfig())
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("cluster.karmada.io/v1alpha1")
	cluster.SetKind("Cluster")
	if err := hub.Get(t.Context(), client.ObjectKey{Name: edge.Name}, cluster); err != nil {
		t.Fatalf("register --api-groups=karmada made no cluster.karmada.io Cluster: %v", err)
	}
	if err := hub.Get(t.Context(), client.ObjectKey{Name: "karmada-es-" + edge.Name}, &corev1.Namespace{}); err != nil {
		t.Fatalf("register --api-groups=karmada made no execution namespace karmada-es-%s: %v", edge.Name, err)
	}

	// register made karmada-cluster, where Karmada keeps its agents'
	// Leases and the control plane its Work signing key in Karmada mode; it
	// made no flotilla-system.
	if err := hub.Get(t.Context(), client.ObjectKey{Name: shared.SystemNamespace}, &corev1.Namespace{}); err == nil {
		t.Errorf("register --api-groups=karmada made the namespace %s", shared.SystemNamespace)
	}
	runInProcess(t, controlplaneConfig{kubeconfig: host.KubeconfigPath, fleet: shared.DefaultFleet, metricsAddr: "0", probeAddr: "0", inProcess: true,
		options: shared.Options{ProbeInterval: 300 * time.Millisecond, Resync: time.Second}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, agentConfig{hubKubeconfig: hubKubeconfig, kubeconfig: edge.KubeconfigPath, probeAddr: "0", inProcess: true,
			options: agent.AgentOptions{Cluster: edge.Name, StatusInterval: 300 * time.Millisecond, Options: shared.Options{SuccessThreshold: time.Millisecond, Resync: time.Second}}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent stopped with %v, want a clean stop", err)
		}
	})

	testkit.Eventually(t, time.Minute, "the agent reports its cluster.karmada.io Cluster Ready", func() (bool, string) {
		if err := hub.Get(t.Context(), client.ObjectKey{Name: edge.Name}, cluster); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(cluster.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprint(cluster.Object["status"])
	})

	applied := time.Now()
	for _, doc := range []string{`
apiVersion: v1
kind: ConfigMap
metadata: {name: pulled, namespace: default}
data: {from: karmada-hub}
`, fmt.Sprintf(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pulled, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: pulled}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, edge.Name)} {
		obj := &unstructured.Unstructured{}
		testkit.MustYAML(t, obj, "%s", doc)
		testkit.MustCreate(t, hub, obj)
	}
	member := plainClient(t, edge.RESTConfig())
	testkit.Eventually(t, time.Minute, "the agent applies the ConfigMap from its karmada-es Work", func() (bool, string) {
		var cm corev1.ConfigMap
		err := member.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "pulled"}, &cm)
		if err == nil && cm.Data["from"] == "karmada-hub" {
			return true, ""
		}
		_ = hub.Get(t.Context(), client.ObjectKey{Name: edge.Name}, cluster)
		return false, fmt.Sprint(err, " ", karmadaState(t, hub, edge.Name), " cluster annotations ", cluster.GetAnnotations(), " spec ", cluster.Object["spec"])
	})
	// The agent's Lease and the signing key of its Works are where Karmada
	// keeps its agents' Leases, karmada-cluster, not flotilla's namespaces.
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "karmada-cluster", Name: edge.Name}, &coordinationv1.Lease{}); err != nil {
		t.Errorf("the agent's Lease karmada-cluster/%s: %v", edge.Name, err)
	}
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "karmada-cluster", Name: work.SigningKeySecret}, &corev1.Secret{}); err != nil {
		t.Errorf("the Work signing key karmada-cluster/%s: %v", work.SigningKeySecret, err)
	}
	works := &unstructured.UnstructuredList{}
	works.SetAPIVersion("work.karmada.io/v1alpha1")
	works.SetKind("WorkList")
	if err := hub.List(t.Context(), works, client.InNamespace("karmada-es-"+edge.Name)); err != nil || len(works.Items) == 0 {
		t.Fatalf("Works in karmada-es-%s: %v, %d; want the ConfigMap's", edge.Name, err, len(works.Items))
	}
	t.Logf("ConfigMap on the pull member %v after apply; test %v", time.Since(applied).Round(10*time.Millisecond), time.Since(start).Round(10*time.Millisecond))
}

// karmadaState describes the ResourceBindings and the Works of cluster's
// execution namespace on hub, for a failure message.
func karmadaState(t *testing.T, hub client.Client, cluster string) string {
	var b strings.Builder
	for _, l := range []struct{ apiVersion, kind, namespace string }{
		{"work.karmada.io/v1alpha2", "ResourceBindingList", "default"},
		{"work.karmada.io/v1alpha1", "WorkList", "karmada-es-" + cluster},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(l.apiVersion)
		list.SetKind(l.kind)
		if err := hub.List(t.Context(), list, client.InNamespace(l.namespace)); err != nil {
			fmt.Fprintf(&b, "%s: %v; ", l.kind, err)
			continue
		}
		for _, o := range list.Items {
			fmt.Fprintf(&b, "%s %s/%s: finalizers %v annotations %v spec.clusters %v status %v; ", o.GetKind(), o.GetNamespace(), o.GetName(), o.GetFinalizers(), o.GetAnnotations(), o.Object["spec"].(map[string]any)["clusters"], o.Object["status"])
		}
	}
	return b.String()
}
