package helm

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAgentChartServiceAccountRunsAgent registers a Pull cluster in a real
// hub (as `register` does), installs the agent's chart into a real member
// (RBAC, ServiceAccount, the hub kubeconfig Secret made from `register`'s
// kubeconfig), and runs the built binary with the chart's arguments, the
// hub kubeconfig read back from that Secret, and the member reached with a
// token of the chart's ServiceAccount only, as in its pod. The agent must
// register the cluster as Pull, and a Deployment placed on it by the
// control plane must reach the member, without one request the member
// forbids. A second agent of the same cluster then runs beside it (the
// chart's Recreate cannot rule that out when a node is cut off): the two
// converge on a change of the template, and neither exits.
func TestAgentChartServiceAccountRunsAgent(t *testing.T) {
	runAgentChart(t)
}

// TestAgentChartCommonPresetRunsAgent is the same run with
// rbac.preset=common: the narrowed role is enough for the agent and for a
// Deployment in a namespace of its own, without one forbidden request.
func TestAgentChartCommonPresetRunsAgent(t *testing.T) {
	runAgentChart(t, "--set", "rbac.preset=common")
}

// runAgentChart is TestAgentChartServiceAccountRunsAgent with the chart's
// values extended by values.
func runAgentChart(t *testing.T, values ...string) {
	t.Helper()
	bin := testkit.SharedProvider(t, moduleRoot(t))
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	hub := controllertest.SystemHost(t, host)
	reg, err := agent.RegisterAgent(t.Context(), hub, member.Name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hubKubeconfig := writeKubeconfig(t, filepath.Join(dir, "hub"), &rest.Config{Host: host.Host, BearerToken: reg.Token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}})

	objs := renderChart(t, agentChart, append([]string{"--set", "clusterName=" + member.Name, "--set-file", "hub.kubeconfig=" + hubKubeconfig,
		"--set", "clusterStatusUpdateFrequency=1s"}, values...)...)
	memberAdmin := controllertest.Client(t, member.RESTConfig(), controllertest.Scheme(t))
	install(t, memberAdmin, objs)

	// The pod's view: the hub kubeconfig as mounted from the chart's
	// Secret, the member through the chart's ServiceAccount.
	var secret corev1.Secret
	if err := memberAdmin.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: agentChart + "-hub"}, &secret); err != nil {
		t.Fatal(err)
	}
	mounted := filepath.Join(dir, "mounted", "kubeconfig")
	writeFile(t, mounted, secret.Data["kubeconfig"])
	saConfig := &rest.Config{Host: member.Host, BearerToken: serviceAccountToken(t, member.Clientset(t), agentChart), TLSClientConfig: rest.TLSClientConfig{CAData: member.CAData}}
	memberKubeconfig := writeKubeconfig(t, filepath.Join(dir, "member"), saConfig)
	waitGranted(t, saConfig)

	// The chart's arguments, the pod's paths and ports replaced.
	agentArgs := func() []string {
		var args []string
		for _, a := range containerArgs(t, objs) {
			switch {
			case strings.HasPrefix(a, "--hub-kubeconfig="):
				a = "--hub-kubeconfig=" + mounted
			case strings.HasPrefix(a, "--health-probe-bind-address="):
				a = "--health-probe-bind-address=" + testkit.FreeAddr(t)
			}
			args = append(args, a)
		}
		return append(args, "--kubeconfig="+memberKubeconfig)
	}
	proc := start(t, bin, agentArgs())
	controllertest.Fleet{Host: host}.StartControlPlane(t, func(o *shared.Options) { o.Fleet = shared.DefaultFleet })

	testkit.Eventually(t, 2*time.Minute, "the agent registers its cluster, Pull and Ready", func() (bool, string) {
		proc.checkRunning(t)
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: member.Name}, &cl); err != nil {
			return false, err.Error()
		}
		ready := apimeta.IsStatusConditionTrue(cl.Status.Conditions, api.ClusterConditionReady) && cl.Status.KubernetesVersion != ""
		return cl.Spec.SyncMode == api.Pull && ready, fmt.Sprintf("spec %+v, status %+v", cl.Spec, cl.Status)
	})

	propagateWeb(t, hub, member.Name, false)

	waitApplied(t, hub, memberAdmin, member.Name, 2, proc)

	// A second agent of the same cluster, as when the pod's node is cut off
	// and the Deployment starts another: the two converge on a change.
	second := start(t, bin, agentArgs())
	var web appsv1.Deployment
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web"}, &web); err != nil {
		t.Fatal(err)
	}
	orig := web.DeepCopy()
	web.Spec.Replicas = ptr.To(int32(3))
	if err := hub.Patch(t.Context(), &web, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, hub, memberAdmin, member.Name, 3, proc, second)
	for _, p := range []*process{proc, second} {
		if log := strings.ToLower(p.log()); strings.Contains(log, "forbidden") {
			t.Errorf("the member or the hub forbade the agent something:\n%s", p.log())
		}
	}
}

// waitApplied waits until the member runs shop/web with replicas, its Work
// in the cluster's execution namespace reports Applied, and every agent
// still runs.
func waitApplied(t *testing.T, hub, member client.Client, cluster string, replicas int32, agents ...*process) {
	t.Helper()
	testkit.Eventually(t, 2*time.Minute, fmt.Sprintf("the Deployment on the member with %d replicas, its Work applied by the agent", replicas), func() (bool, string) {
		for _, p := range agents {
			p.checkRunning(t)
		}
		var got appsv1.Deployment
		if err := member.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web"}, &got); err != nil {
			return false, err.Error()
		}
		var w workv1.Work
		key := client.ObjectKey{Namespace: shared.ExecutionNamespace(cluster), Name: shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"})}
		if err := hub.Get(t.Context(), key, &w); err != nil {
			return false, err.Error()
		}
		applied := apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkApplied)
		return ptr.Deref(got.Spec.Replicas, 1) == replicas && applied, fmt.Sprintf("member replicas %d; Work %s conditions %+v", ptr.Deref(got.Spec.Replicas, 1), key, w.Status.Conditions)
	})
}
