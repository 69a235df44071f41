package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
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

// TestRegisterThenAgent runs the commands as operators would. An agent
// with the hub administrator's kubeconfig creates its Pull Cluster itself;
// one for a name the control plane pushes to is refused and exits. register
// keeps the existing Pull Cluster and writes the agent's own hub kubeconfig
// (mode 0600, without the administrator's token), and the agent started
// with it adopts the Cluster, reports the member Ready with its facts (the
// version and the node and resource summaries of a Full member), and stops
// cleanly.
func TestRegisterThenAgent(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "hub"}).Clusters[0]
	// A Full member (kwok node, controllers), so the node and resource
	// summaries the agent reports are real.
	edge := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "edge"}).Clusters[0]
	hub := controllertest.Host(t, host, controllertest.Scheme(t))
	agentOpts := agent.AgentOptions{Cluster: edge.Name, StatusInterval: 300 * time.Millisecond, Options: shared.Options{SuccessThreshold: time.Millisecond}}
	ready := func(what string) {
		t.Helper()
		testkit.Eventually(t, time.Minute, what, func() (bool, string) {
			var cl clusterv1.Cluster
			if err := hub.Get(t.Context(), client.ObjectKey{Name: edge.Name}, &cl); err != nil {
				return false, err.Error()
			}
			nodes, resources := cl.Status.NodeSummary, cl.Status.ResourceSummary
			facts := cl.Status.KubernetesVersion != "" && nodes != nil && nodes.TotalNum == 1 && nodes.ReadyNum == 1 && resources != nil && !resources.Allocatable.Cpu().IsZero()
			return cl.Spec.SyncMode == api.Pull && cl.Spec.ID != "" && facts && apimeta.IsStatusConditionTrue(cl.Status.Conditions, api.ClusterConditionReady),
				fmt.Sprintf("spec %+v, status %+v", cl.Spec, cl.Status)
		})
	}
	run := func(hubKubeconfig string, opts agent.AgentOptions) (done chan error, stop func() error) {
		ctx, cancel := context.WithCancel(t.Context())
		done = make(chan error, 1)
		go func() {
			done <- runAgent(ctx, agentConfig{hubKubeconfig: hubKubeconfig, kubeconfig: edge.KubeconfigPath, probeAddr: "0", inProcess: true, options: opts})
		}()
		t.Cleanup(cancel)
		return done, func() error { cancel(); return <-done }
	}

	t.Log("an agent that may create Clusters creates its own, Pull")
	_, stop := run(host.KubeconfigPath, agentOpts)
	ready("the agent created a Ready Pull cluster")
	if err := stop(); err != nil {
		t.Fatalf("agent stopped with %v, want a clean stop", err)
	}
	testkit.MustCreate(t, hub, controllertest.ClusterObject("pushed", "https://127.0.0.1:1", shared.SystemNamespace))
	pushed := agentOpts
	pushed.Cluster = "pushed"
	done, _ := run(host.KubeconfigPath, pushed)
	select {
	case <-time.After(time.Minute):
		t.Fatal("the agent of a Push cluster is still running after a minute")
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cluster pushed exists in the hub with spec.syncMode Push") {
			t.Errorf("agent of a Push cluster: %v, want a refusal naming its syncMode", err)
		}
	}

	t.Log("register keeps the Pull cluster and hands out the agent's own kubeconfig")
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
	// What the first agent reported goes, so only the new one can bring it back.
	var cl clusterv1.Cluster
	if err := hub.Get(t.Context(), client.ObjectKey{Name: edge.Name}, &cl); err != nil {
		t.Fatal(err)
	}
	cl.Status = api.ClusterStatus{}
	if err := hub.Status().Update(t.Context(), &cl); err != nil {
		t.Fatal(err)
	}
	_, stop = run(hubKubeconfig, agentOpts)
	ready("the agent with its own identity reports the member Ready")
	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v, want a clean stop", err)
	}
}
