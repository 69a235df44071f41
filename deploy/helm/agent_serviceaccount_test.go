package helm

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
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
// forbids.
func TestAgentChartServiceAccountRunsAgent(t *testing.T) {
	bin := testkit.BuildProvider(t, moduleRoot(t))
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	hub := controllertest.SystemHost(t, host)
	reg, err := controller.RegisterAgent(t.Context(), hub, member.Name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hubKubeconfig := writeKubeconfig(t, filepath.Join(dir, "hub"), &rest.Config{Host: host.Host, BearerToken: reg.Token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}})

	objs := renderChart(t, agentChart, "--set", "clusterName="+member.Name, "--set-file", "hub.kubeconfig="+hubKubeconfig,
		"--set", "clusterStatusUpdateFrequency=1s")
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
	proc := start(t, bin, append(args, "--kubeconfig="+memberKubeconfig))
	controllertest.Fleet{Host: host}.StartControlPlane(t, func(o *controller.Options) { o.Fleet = controller.DefaultFleet })

	testkit.Eventually(t, 2*time.Minute, "the agent registers its cluster, Pull and Ready", func() (bool, string) {
		proc.checkRunning(t)
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: member.Name}, &cl); err != nil {
			return false, err.Error()
		}
		ready := cl.Status.KubernetesVersion != "" && len(cl.Status.Conditions) > 0
		for _, c := range cl.Status.Conditions {
			ready = ready && (c.Type != api.ClusterConditionReady || c.Status == metav1.ConditionTrue)
		}
		return cl.Spec.SyncMode == api.Pull && cl.Spec.ID != "" && ready, fmt.Sprintf("spec %+v, status %+v", cl.Spec, cl.Status)
	})

	propagateWeb(t, hub, member.Name, false)

	testkit.Eventually(t, 2*time.Minute, "the Deployment on the member, applied by the agent", func() (bool, string) {
		proc.checkRunning(t)
		var got appsv1.Deployment
		err := memberAdmin.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web"}, &got)
		var works workv1.WorkList
		_ = hub.List(t.Context(), &works, client.InNamespace(controller.ExecutionNamespace(member.Name)))
		var seen []string
		for _, w := range works.Items {
			seen = append(seen, fmt.Sprintf("%s %v %+v", w.Name, w.Annotations, w.Status.Conditions))
		}
		return err == nil, fmt.Sprintf("%v; Works %v", err, seen)
	})
	if log := strings.ToLower(proc.log()); strings.Contains(log, "forbidden") {
		t.Errorf("the member or the hub forbade the agent something:\n%s", proc.log())
	}
}
