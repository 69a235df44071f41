package agent_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAgentReportsAtStartAndWatchesStatus: a Pull cluster the control
// plane reports Unknown (no agent ran yet) turns Ready as soon as its agent
// starts, although the success threshold is a minute; and with the
// resync at ten minutes in the agent and the control plane, a status
// change of the Deployment in the Pull member reaches the host template
// within seconds, from the agent's watch of its member.
func TestAgentReportsAtStartAndWatchesStatus(t *testing.T) {
	e := startPullEnv(t)
	ctx := t.Context()
	long := func(o *shared.Options) { o.Resync, o.SuccessThreshold = 10*time.Minute, time.Minute }
	controllertest.Fleet{Host: e.host}.StartControlPlane(t, long)
	e.waitCluster(t, "the Pull cluster Unknown while no agent runs", metav1.ConditionUnknown, func(*clusterv1.Cluster) bool { return true })

	opts := agent.AgentOptions{
		Cluster: e.pull, LeaseDuration: 2 * time.Second, RenewInterval: 300 * time.Millisecond, StatusInterval: 300 * time.Millisecond,
		Options: controllertest.Options("test"),
	}
	long(&opts.Options)
	start := time.Now()
	controllertest.StartManager(t, agentHubConfig(e.host, e.token),
		ctrl.Options{Scheme: controllertest.Scheme(t), Cache: agent.AgentCacheOptions(e.pull)},
		func(mgr manager.Manager) error { return agent.SetupAgent(mgr, e.pullMember, opts) })
	testkit.Eventually(t, 15*time.Second, "the Pull cluster Ready at the agent's first report", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := e.hub.Get(ctx, client.ObjectKey{Name: e.pull}, &cl); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("ready %+v", c)
	})
	t.Logf("agent start -> Pull cluster Ready: %v", time.Since(start).Round(10*time.Millisecond))

	controllertest.CreatePolicy(t, e.hub, controllertest.WebPolicy(e.pull))
	testkit.MustCreate(t, e.hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, map[string]client.Client{e.pull: e.members[e.pull]}, map[string]int32{e.pull: 2})
	workKey := client.ObjectKey{Namespace: shared.ExecutionNamespace(e.pull), Name: shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})}
	testkit.Eventually(t, controllertest.Deadline, "the agent observed its Work", func() (bool, string) {
		var w workv1.Work
		if err := e.hub.Get(ctx, workKey, &w); err != nil {
			return false, err.Error()
		}
		return apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable), fmt.Sprintf("conditions %+v", w.Status.Conditions)
	})
	start = time.Now()
	controllertest.SetReady(t, e.members[e.pull], 2)
	testkit.Eventually(t, 10*time.Second, "the host template reports the Pull member's ready replicas", func() (bool, string) {
		var d appsv1.Deployment
		if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 2, fmt.Sprintf("status %+v", d.Status)
	})
	t.Logf("Pull member status -> host template status: %v", time.Since(start).Round(10*time.Millisecond))
}
