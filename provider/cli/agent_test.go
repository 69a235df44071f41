package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAgentFlags: the agent and register commands refuse missing or bad
// flags with the bad-input code, naming the problem.
func TestAgentFlags(t *testing.T) {
	tests := []struct {
		name string
		run  func(stderr *bytes.Buffer) int
		want string
	}{
		{"agent without a hub", func(e *bytes.Buffer) int { return Agent([]string{"--cluster-name", "edge"}, e) }, "Usage: terraform-provider-flotilla agent"},
		{"agent without a name", func(e *bytes.Buffer) int { return Agent([]string{"--hub-kubeconfig", "hub"}, e) }, "Usage: terraform-provider-flotilla agent"},
		{"agent with a bad name", func(e *bytes.Buffer) int {
			return Agent([]string{"--hub-kubeconfig", "hub", "--cluster-name", "Edge_1"}, e)
		}, `cluster name "Edge_1"`},
		{"agent renewing slower than its lease", func(e *bytes.Buffer) int {
			return Agent([]string{"--hub-kubeconfig", "hub", "--cluster-name", "edge", "--cluster-lease-duration", "10s", "--cluster-lease-renew-interval", "10s"}, e)
		}, "lease renew interval 10s must be below the lease duration 10s"},
		{"register without an output file", func(e *bytes.Buffer) int {
			return Register([]string{"--hub-kubeconfig", "hub", "--cluster-name", "edge"}, &bytes.Buffer{}, e)
		}, "Usage: terraform-provider-flotilla register"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := tt.run(&stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}

// TestRegisterThenAgent runs the two commands as an operator would: register
// writes the agent's hub kubeconfig (mode 0600), and the agent started with
// it and the member's kubeconfig makes the member a Ready Pull cluster with
// its facts, then stops cleanly.
func TestRegisterThenAgent(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, edge := fleet.Clusters[0], fleet.Clusters[1]
	hubKubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
	var stdout, stderr bytes.Buffer
	if code := Register([]string{"--hub-kubeconfig", host.KubeconfigPath, "--cluster-name", edge.Name, "--out", hubKubeconfig}, &stdout, &stderr); code != 0 {
		t.Fatalf("register exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "flotilla-cluster/flotilla-agent-"+edge.Name) {
		t.Errorf("register printed %q; want the agent's service account", stdout.String())
	}
	if fi, err := os.Stat(hubKubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("agent kubeconfig %v, mode %v; want 0600", err, fi)
	}
	if data, _ := os.ReadFile(hubKubeconfig); bytes.Contains(data, []byte(host.Token)) {
		t.Fatal("the agent's kubeconfig holds the administrator's token")
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, agentConfig{
			hubKubeconfig: hubKubeconfig, kubeconfig: edge.KubeconfigPath, probeAddr: "0", inProcess: true,
			options: controller.AgentOptions{Cluster: edge.Name, StatusInterval: 300 * time.Millisecond,
				Options: controller.Options{SuccessThreshold: time.Millisecond}},
		})
	}()
	hub := controllertest.Client(t, host.RESTConfig(), controllertest.Scheme(t))
	testkit.Eventually(t, time.Minute, "the member a Ready Pull cluster with its version", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: edge.Name}, &cl); err != nil {
			return false, err.Error()
		}
		return cl.Spec.SyncMode == api.Pull && cl.Status.KubernetesVersion != "" && apimeta.IsStatusConditionTrue(cl.Status.Conditions, api.ClusterConditionReady),
			cl.Status.KubernetesVersion
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("agent stopped with %v, want a clean stop", err)
	}
}
